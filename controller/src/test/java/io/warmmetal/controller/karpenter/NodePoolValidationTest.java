package io.warmmetal.controller.karpenter;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Karpenter's own validation cases, from {@code pkg/apis/v1/nodepool_validation_cel_test.go} (each
 * named as upstream names it): a NodePool the CRD or {@code RuntimeValidate} rejects has problems
 * here, one it accepts has none.
 */
class NodePoolValidationTest {

  /** Upstream's starting NodePool: a node class reference and one capacity-type requirement. */
  private static NodePool base() {
    NodePool pool = new NodePool();
    pool.getMetadata().setName("default");
    NodeClassReference ref = new NodeClassReference();
    ref.group = "warmmetal.io";
    ref.kind = "WarmMetalNodeClass";
    ref.name = "default";
    pool.getSpec().template.spec.nodeClassRef = ref;
    pool.getSpec().template.spec.requirements =
        new ArrayList<>(List.of(req(WellKnown.CAPACITY_TYPE_LABEL, "Exists")));
    pool.getSpec().disruption = new NodePool.Disruption();
    return pool;
  }

  private static Requirement req(String key, String op, String... values) {
    return new Requirement(key, op, List.of(values));
  }

  private static Consumer<NodePool> requirements(Requirement... r) {
    return p -> p.getSpec().template.spec.requirements = new ArrayList<>(List.of(r));
  }

  private static Consumer<NodePool> labels(String key, String value) {
    return p -> p.getSpec().template.metadata.labels = new HashMap<>(Map.of(key, value));
  }

  private static Consumer<NodePool> taints(Taint... t) {
    return p -> p.getSpec().template.spec.taints = new ArrayList<>(List.of(t));
  }

  private static Taint taint(String key, String value, String effect) {
    return new Taint(effect, key, null, value);
  }

  private static Consumer<NodePool> budget(
      String nodes, String schedule, String duration, String... reasons) {
    return p -> {
      NodePool.Budget b = new NodePool.Budget();
      b.nodes = nodes;
      b.schedule = schedule;
      b.duration = duration;
      b.reasons = reasons.length == 0 ? null : List.of(reasons);
      p.getSpec().disruption.budgets = new ArrayList<>(List.of(b));
    };
  }

  private static Requirement withMin(Requirement r, int min) {
    r.setMinValues(min);
    return r;
  }

  private static Arguments valid(String upstream, Consumer<NodePool> change) {
    return Arguments.of(upstream, change, true);
  }

  private static Arguments invalid(String upstream, Consumer<NodePool> change) {
    return Arguments.of(upstream, change, false);
  }

  static Stream<Arguments> cases() {
    String longName = "a".repeat(250);
    return Stream.of(
        valid(
            "should succeed on a disabled expireAfter",
            p -> p.getSpec().template.spec.expireAfter = "Never"),
        valid(
            "should succeed on a valid expireAfter: single unit",
            p -> p.getSpec().template.spec.expireAfter = "30s"),
        valid(
            "should succeed on a valid expireAfter: multiple units",
            p -> p.getSpec().template.spec.expireAfter = "1h30m5s"),
        invalid(
            "should fail on an invalid expireAfter: negative",
            p -> p.getSpec().template.spec.expireAfter = "-1s"),
        invalid(
            "should fail on an invalid expireAfter: invalid unit",
            p -> p.getSpec().template.spec.expireAfter = "1hr"),
        invalid(
            "should fail on an invalid expireAfter: partial match",
            p -> p.getSpec().template.spec.expireAfter = "FooNever"),
        invalid(
            "(issue 12) expireAfter in days", p -> p.getSpec().template.spec.expireAfter = "30d"),
        valid(
            "should succeed on a disabled consolidateAfter",
            p -> p.getSpec().disruption.consolidateAfter = "Never"),
        valid(
            "should succeed on a valid consolidateAfter: multiple units",
            p -> p.getSpec().disruption.consolidateAfter = "1h30m5s"),
        invalid(
            "should fail on an invalid consolidateAfter: negative",
            p -> p.getSpec().disruption.consolidateAfter = "-1s"),
        invalid(
            "should fail on an invalid consolidateAfter: invalid unit",
            p -> p.getSpec().disruption.consolidateAfter = "1hr"),
        invalid(
            "should fail on an invalid consolidateAfter: partial match",
            p -> p.getSpec().disruption.consolidateAfter = "FooNever"),
        valid(
            "should succeed when setting consolidateAfter with consolidationPolicy=WhenEmpty",
            p -> {
              p.getSpec().disruption.consolidateAfter = "30s";
              p.getSpec().disruption.consolidationPolicy = "WhenEmpty";
            }),
        valid(
            "consolidation policy: Balanced",
            p -> p.getSpec().disruption.consolidationPolicy = "Balanced"),
        invalid(
            "consolidation policy not in the enum",
            p -> p.getSpec().disruption.consolidationPolicy = "WhenUnderutilized"),
        invalid(
            "should fail when creating a budget with an invalid cron", budget("10", "*", "20m")),
        invalid(
            "should fail when creating a schedule with less than 5 entries",
            budget("10", "* * * * ", "20m")),
        invalid(
            "should fail when creating a budget with a negative duration",
            budget("10", "* * * * *", "-20m")),
        invalid(
            "should fail when creating a budget with a seconds duration",
            budget("10", "* * * * *", "30s")),
        invalid(
            "should fail when creating a budget with a negative value int",
            budget("-10", null, null)),
        invalid(
            "should fail when creating a budget with a negative value percent",
            budget("-10%", null, null)),
        invalid(
            "should fail when creating a budget with a value percent with more than 3 digits",
            budget("1000%", null, null)),
        invalid(
            "should fail when creating a budget with a cron but no duration",
            budget("10", "* * * * *", null)),
        invalid(
            "should fail when creating a budget with a duration but no cron",
            budget("10", null, "20m")),
        valid(
            "should succeed when creating a budget with both duration and cron",
            budget("10", "* * * * *", "20m")),
        valid(
            "should succeed when creating a budget with hours and minutes in duration",
            budget("10", "* * * * *", "2h20m")),
        valid(
            "should succeed when creating a budget with neither duration nor cron",
            budget("10", null, null)),
        valid(
            "should succeed when creating a budget with special cased crons",
            budget("10", "@annually", "20m")),
        valid(
            "should allow setting multiple reasons", budget("10", null, null, "Drifted", "Empty")),
        invalid("a budget reason not in the enum", budget("10", null, null, "Expired")),
        valid(
            "should succeed for valid taints",
            taints(
                taint("a", "b", "NoSchedule"),
                taint("c", "d", "NoExecute"),
                taint("e", "f", "PreferNoSchedule"),
                taint("Test", null, "NoSchedule"),
                taint("test.com/Test", null, "NoSchedule"),
                taint("test.com.com/test", null, "NoSchedule"),
                taint("key-only", null, "NoExecute"))),
        invalid(
            "should fail for invalid taint keys: test.com.com}",
            taints(taint("test.com.com}", null, "NoSchedule"))),
        invalid(
            "should fail for invalid taint keys: Test.com/test",
            taints(taint("Test.com/test", null, "NoSchedule"))),
        invalid(
            "should fail for invalid taint keys: test/test/test",
            taints(taint("test/test/test", null, "NoSchedule"))),
        invalid(
            "should fail for invalid taint keys: test/",
            taints(taint("test/", null, "NoSchedule"))),
        invalid(
            "should fail for invalid taint keys: /test",
            taints(taint("/test", null, "NoSchedule"))),
        invalid(
            "should fail at runtime for taint keys that are too long",
            taints(taint("test.com.test." + longName + "/test", null, "NoSchedule"))),
        invalid("should fail for missing taint key", taints(taint(null, null, "NoSchedule"))),
        invalid(
            "should fail for invalid taint value",
            taints(taint("invalid-value", "???", "NoSchedule"))),
        invalid(
            "should fail for invalid taint effect", taints(taint("invalid-effect", null, "???"))),
        valid(
            "should not fail for same key with different effects",
            taints(taint("a", null, "NoSchedule"), taint("a", null, "NoExecute"))),
        invalid(
            "duplicate taint Key/Effect pair (runtime)",
            taints(taint("a", null, "NoSchedule"), taint("a", "b", "NoSchedule"))),
        valid(
            "should succeed for valid requirement keys",
            requirements(
                req("Test", "Exists"),
                req("test.com/Test", "Exists"),
                req("test.com.com/test", "Exists"),
                req("key-only", "Exists"))),
        invalid(
            "should fail for invalid requirement keys: test.com.com}",
            requirements(req("test.com.com}", "Exists"))),
        invalid(
            "should fail for invalid requirement keys: Test.com/test",
            requirements(req("Test.com/test", "Exists"))),
        invalid(
            "should fail for invalid requirement keys: test/test/test",
            requirements(req("test/test/test", "Exists"))),
        invalid(
            "should fail for invalid requirement keys: test/",
            requirements(req("test/", "Exists"))),
        invalid(
            "should fail for invalid requirement keys: /test",
            requirements(req("/test", "Exists"))),
        invalid(
            "should fail at runtime for requirement keys that are too long",
            requirements(req("test.com.test/test-" + longName, "Exists"))),
        invalid(
            "should fail for the karpenter.sh/nodepool label",
            requirements(req(WellKnown.NODEPOOL_LABEL, "In", "x"))),
        valid(
            "should allow supported ops",
            requirements(
                req(WellKnown.ZONE_LABEL, "In", "test"),
                req(WellKnown.ZONE_LABEL, "Gt", "1"),
                req(WellKnown.ZONE_LABEL, "Lt", "1"),
                req(WellKnown.ZONE_LABEL, "NotIn"),
                req(WellKnown.ZONE_LABEL, "Exists"))),
        invalid(
            "should fail for unsupported ops",
            requirements(req(WellKnown.ZONE_LABEL, "unknown", "test"))),
        invalid(
            "should fail for restricted domains",
            requirements(req("karpenter.sh/test", "In", "test"))),
        invalid(
            "should fail for restricted domains (subdomain)",
            requirements(req("sub.karpenter.sh/test", "In", "test"))),
        invalid(
            "should fail for restricted labels",
            requirements(req(WellKnown.HOSTNAME_LABEL, "In", "test"))),
        valid(
            "should allow kubernetes domains: kubernetes.io",
            requirements(req("kubernetes.io/test", "In", "test"))),
        valid(
            "should allow kubernetes domains: k8s.io",
            requirements(req("k8s.io/test", "In", "test"))),
        valid(
            "should allow kubernetes subdomains exceptions",
            requirements(req("subdomain.kubernetes.io/test", "In", "test"))),
        valid(
            "should allow well known label exceptions",
            requirements(
                req(WellKnown.ZONE_LABEL, "In", "test"),
                req(WellKnown.REGION_LABEL, "In", "test"),
                req(WellKnown.INSTANCE_TYPE_LABEL, "In", "test"),
                req(WellKnown.ARCH_LABEL, "In", "test"),
                req(WellKnown.OS_LABEL, "In", "test"))),
        valid(
            "should allow non-empty set after removing overlapped value",
            requirements(
                req(WellKnown.ZONE_LABEL, "In", "test", "foo"),
                req(WellKnown.ZONE_LABEL, "NotIn", "test", "bar"))),
        valid("should allow empty requirements", requirements()),
        invalid(
            "should fail with invalid GT or LT values: empty",
            requirements(req(WellKnown.ZONE_LABEL, "Gt"))),
        invalid(
            "should fail with invalid GT or LT values: two",
            requirements(req(WellKnown.ZONE_LABEL, "Gt", "1", "2"))),
        invalid(
            "should fail with invalid GT or LT values: not a number",
            requirements(req(WellKnown.ZONE_LABEL, "Lt", "a"))),
        invalid(
            "should fail with invalid GT or LT values: negative",
            requirements(req(WellKnown.ZONE_LABEL, "Lt", "-1"))),
        invalid(
            "should fail with invalid GTE or LTE values",
            requirements(req(WellKnown.ZONE_LABEL, "Gte", "-1"))),
        valid(
            "Gte and Lte with a single value",
            requirements(
                req("example.com/cores", "Gte", "4"), req("example.com/cores", "Lte", "64"))),
        invalid("In without values", requirements(req(WellKnown.INSTANCE_TYPE_LABEL, "In"))),
        invalid(
            "should error when minValues is negative",
            requirements(withMin(req(WellKnown.INSTANCE_TYPE_LABEL, "In", "a"), -1))),
        invalid(
            "should error when minValues is zero",
            requirements(withMin(req(WellKnown.INSTANCE_TYPE_LABEL, "In", "a"), 0))),
        invalid(
            "should error when minValues is more than 50",
            requirements(withMin(req(WellKnown.INSTANCE_TYPE_LABEL, "Exists"), 51))),
        valid(
            "should allow more than 50 values if minValues is not specified.",
            requirements(
                req(
                    WellKnown.INSTANCE_TYPE_LABEL,
                    "In",
                    Stream.iterate(0, i -> i + 1)
                        .limit(60)
                        .map(i -> "t" + i)
                        .toArray(String[]::new)))),
        invalid(
            "should error when minValues is greater than the number of unique values specified within In operator",
            requirements(withMin(req(WellKnown.INSTANCE_TYPE_LABEL, "In", "a", "a"), 2))),
        invalid(
            "capacity type with only unknown values (runtime)",
            requirements(req(WellKnown.CAPACITY_TYPE_LABEL, "In", "test"))),
        valid("should allow unrecognized labels", labels("foo", "bar")),
        invalid(
            "should fail for the karpenter.sh/nodepool label (labels)",
            labels(WellKnown.NODEPOOL_LABEL, "x")),
        invalid("should fail for invalid label keys", labels("spaces are not allowed", "x")),
        invalid(
            "should fail at runtime for label keys that are too long",
            labels("test.com.test." + longName + "/test", "x")),
        invalid("should fail for invalid label values", labels("foo", "/ is not allowed")),
        invalid("should fail for restricted label domains", labels("karpenter.sh/custom", "x")),
        valid(
            "should allow labels kOps require",
            labels("kops.k8s.io/instancegroup", "karpenter-nodes")),
        valid("should allow labels in kubernetes domains", labels("kubernetes.io/custom", "x")),
        valid(
            "should allow labels prefixed with the kubernetes domain",
            labels("subdomain.kubernetes.io/custom", "x")),
        invalid(
            "label kubernetes.io/hostname is restricted", labels(WellKnown.HOSTNAME_LABEL, "x")),
        invalid(
            "should fail if group is unset",
            p -> p.getSpec().template.spec.nodeClassRef.group = null),
        invalid(
            "should fail if kind is unset", p -> p.getSpec().template.spec.nodeClassRef.kind = ""),
        invalid(
            "should fail if name is unset",
            p -> p.getSpec().template.spec.nodeClassRef.name = null),
        invalid("nodeClassRef is required", p -> p.getSpec().template.spec.nodeClassRef = null),
        valid(
            "should succeed when replicas is set to a positive value",
            p -> p.getSpec().replicas = 3L),
        valid("should succeed when replicas is set to zero", p -> p.getSpec().replicas = 0L),
        invalid(
            "should fail when replicas is set to a negative value",
            p -> p.getSpec().replicas = -1L),
        invalid(
            "only 'limits.nodes' is supported on static NodePools",
            p -> {
              p.getSpec().replicas = 2L;
              p.getSpec().limits = Map.of("cpu", new Quantity("10"));
            }),
        valid(
            "static NodePool with a nodes limit",
            p -> {
              p.getSpec().replicas = 2L;
              p.getSpec().limits = Map.of("nodes", new Quantity("5"));
            }),
        invalid(
            "'weight' is not supported on static NodePools",
            p -> {
              p.getSpec().replicas = 2L;
              p.getSpec().weight = 10;
            }),
        invalid("weight above 100", p -> p.getSpec().weight = 500),
        invalid("weight below 1", p -> p.getSpec().weight = 0),
        valid("weight 100", p -> p.getSpec().weight = 100),
        invalid(
            "a limit that is not a quantity",
            p -> p.getSpec().limits = Map.of("cpu", new Quantity("ten"))),
        valid(
            "limits as quantities",
            p ->
                p.getSpec().limits =
                    Map.of(
                        "cpu",
                        new Quantity("1000"),
                        "memory",
                        new Quantity("1000Gi"),
                        "nvidia.com/gpu",
                        new Quantity("8"))),
        invalid(
            "terminationGracePeriod Never is not allowed",
            p -> p.getSpec().template.spec.terminationGracePeriod = "Never"),
        valid(
            "terminationGracePeriod 48h",
            p -> p.getSpec().template.spec.terminationGracePeriod = "48h"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void asUpstreamJudgesIt(String upstream, Consumer<NodePool> change, boolean valid) {
    NodePool pool = base();
    change.accept(pool);
    List<String> problems = NodePoolValidation.problems(pool);
    if (valid) {
      assertThat(problems).as(upstream).isEmpty();
    } else {
      assertThat(problems).as(upstream).isNotEmpty();
    }
  }

  @Test
  void theUpstreamBaseIsValidAndProblemsNameTheirField() {
    assertThat(NodePoolValidation.problems(base())).isEmpty();
    NodePool pool = base();
    pool.getSpec().weight = 500;
    pool.getSpec().template.spec.expireAfter = "30d";
    assertThat(NodePoolValidation.problems(pool))
        .containsExactlyInAnyOrder(
            "spec.weight: 500 is not between 1 and 100",
            "spec.template.spec.expireAfter: '30d' is not a duration such as 720h, or Never");
  }
}
