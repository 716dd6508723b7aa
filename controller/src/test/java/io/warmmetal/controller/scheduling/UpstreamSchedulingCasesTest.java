package io.warmmetal.controller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.NodeAffinity;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.NodeSelectorTermBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodAffinity;
import io.fabric8.kubernetes.api.model.PodAffinityTermBuilder;
import io.fabric8.kubernetes.api.model.PodAntiAffinity;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PreferredSchedulingTerm;
import io.fabric8.kubernetes.api.model.PreferredSchedulingTermBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraintBuilder;
import io.fabric8.kubernetes.api.model.WeightedPodAffinityTermBuilder;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.scheduling.Scheduler.PlannedNode;
import io.warmmetal.controller.state.InstanceTypes;
import io.warmmetal.controller.state.PodRequests;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.function.Executable;

/**
 * Upstream Karpenter's scheduling test cases, each written again as a case of ours: fabric8 pods
 * through {@link PodRequests#of}, NodePools as {@link NodePoolView}s (their labels from {@link
 * InstanceTypes#poolLabels}, as the controller makes them), instance types as upstream's fake cloud
 * provider has them, and {@link Scheduler}'s plan checked as upstream's test checks the nodes it
 * launches. Each case is named after the upstream test it comes from (file under {@code pkg/}, then
 * its Describe/Context/It path).
 *
 * <p>What the fake cloud provider gives and we model alike: its default instance types, their
 * labels ({@code integer}, {@code size}, {@code special} included), capacities ({@code pods} too)
 * and prices, and 100m/10Mi kube-reserved on every node (the scheduler's reserve). Its types here
 * have no offerings: new nodes get no zone, so zone cases appear only where the zones are those of
 * nodes already there (the {@code inFlight} argument); an upstream case needing zone offerings for
 * new nodes is left out. Where a zone stands in an upstream case only as a key with values to
 * choose from, the case names the stand-in it uses (an instance type, a label of the pool's).
 */
class UpstreamSchedulingCasesTest {
  private static final String S = "controllers/provisioning/scheduling/suite_test.go";
  private static final String T = "controllers/provisioning/scheduling/topology_test.go";
  private static final String IS = "controllers/provisioning/scheduling/instance_selection_test.go";
  private static final String P = "controllers/provisioning/suite_test.go";
  private static final String HP = "scheduling/hostportusage_test.go";
  private static final String ST = "controllers/state/suite_test.go";

  private static final long MI = 1L << 20;
  private static final long GI = 1L << 30;
  private static final long UNLIMITED = Long.MAX_VALUE / 4;
  private static final Resources KUBE_RESERVED = Resources.of(100, 10 * MI);

  private static final String ZONE = "topology.kubernetes.io/zone";
  private static final String HOST = PodAffinityTerm.HOSTNAME;
  private static final String ARCH = "kubernetes.io/arch";
  private static final String OS = "kubernetes.io/os";
  private static final String IT = "node.kubernetes.io/instance-type";
  private static final String CT = "karpenter.sh/capacity-type";
  private static final String NP = "karpenter.sh/nodepool";
  private static final String INTEGER = "integer";
  private static final String SIZE = "size";
  private static final String SPECIAL = "special";
  private static final String VENDOR_A = "fake.com/vendor-a";
  private static final String VENDOR_B = "fake.com/vendor-b";
  private static final String KEY = "test-key";
  private static final String VALUE = "test-value";
  private static final String DNS = "DoNotSchedule";
  private static final String ANYWAY = "ScheduleAnyway";
  private static final Map<String, String> TEST = Map.of("test", "test");
  private static final Map<String, String> S2 = Map.of("security", "s2");
  private static final Consumer<Map<String, String>> ANY_NODE = labels -> {};

  private static final InstanceType DEFAULT_TYPE =
      fake("default-instance-type", "amd64", 4, 4 * GI);
  private static final InstanceType SMALL = fake("small-instance-type", "amd64", 2, 2 * GI);
  private static final InstanceType ARM = fake("arm-instance-type", "arm64", 16, 128 * GI);

  /** {@code fake.CloudProvider}'s instance types. */
  private static final List<InstanceType> DEFAULT_TYPES =
      List.of(
          DEFAULT_TYPE,
          SMALL,
          fake("gpu-vendor-instance-type", "amd64", "linux", 4, 4 * GI, 5, Map.of(VENDOR_A, 2L)),
          fake("gpu-vendor-b-instance-type", "amd64", "linux", 4, 4 * GI, 5, Map.of(VENDOR_B, 2L)),
          ARM,
          fake("single-pod-instance-type", "amd64", "linux", 4, 4 * GI, 1, Map.of()));

  // ---------------------------------------------------------------------------------------------------------------
  // Custom constraints: NodePool labels and requirements against node selectors and required node
  // affinity
  // ---------------------------------------------------------------------------------------------------------------

  @TestFactory
  Stream<DynamicTest> customConstraints() {
    String labels = "Scheduling › Custom Constraints › NodePool with Labels › ";
    String logic = "Scheduling › Custom Constraints › Scheduling Logic › ";
    Pool labelled = pool().label(KEY, VALUE);
    Pool required = pool().req(KEY, "In", VALUE);
    return Stream.of(
        onePod(
            "A01",
            S,
            labels + "should schedule unconstrained pods that don't have matching node selectors",
            labelled,
            pod(),
            l -> assertThat(l).containsEntry(KEY, VALUE)),
        onePod(
            "A02",
            S,
            labels + "should not schedule pods that have conflicting node selectors",
            labelled,
            pod().select(KEY, "different-value"),
            null),
        onePod(
            "A03",
            S,
            labels + "should not schedule pods that have node selectors with undefined key",
            pool(),
            pod().select(KEY, VALUE),
            null),
        onePod(
            "A04",
            S,
            labels + "should schedule pods that have matching requirements",
            labelled,
            pod().require(nr(KEY, "In", VALUE, "another-value")),
            l -> assertThat(l).containsEntry(KEY, VALUE)),
        onePod(
            "A05",
            S,
            labels + "should not schedule pods that have conflicting requirements",
            labelled,
            pod().require(nr(KEY, "In", "another-value")),
            null),
        onePod(
            "B01",
            S,
            logic
                + "should not schedule pods that have node selectors with In operator and undefined key",
            pool(),
            pod().require(nr(KEY, "In", VALUE)),
            null),
        onePod(
            "B02",
            S,
            logic
                + "should schedule pods that have node selectors with NotIn operator and undefined key",
            pool(),
            pod().require(nr(KEY, "NotIn", VALUE)),
            l -> assertThat(l).doesNotContainEntry(KEY, VALUE)),
        onePod(
            "B03",
            S,
            logic
                + "should not schedule pods that have node selectors with Exists operator and "
                + "undefined key",
            pool(),
            pod().require(nr(KEY, "Exists")),
            null),
        onePod(
            "B04",
            S,
            logic + "should schedule pods that with DoesNotExists operator and undefined key",
            pool(),
            pod().require(nr(KEY, "DoesNotExist")),
            l -> assertThat(l).doesNotContainKey(KEY)),
        onePod(
            "B05",
            S,
            logic + "should schedule unconstrained pods that don't have matching node selectors",
            required,
            pod(),
            l -> assertThat(l).containsEntry(KEY, VALUE)),
        onePod(
            "B06",
            S,
            logic
                + "should schedule pods that have node selectors with matching value and In operator",
            required,
            pod().require(nr(KEY, "In", VALUE)),
            l -> assertThat(l).containsEntry(KEY, VALUE)),
        onePod(
            "B07",
            S,
            logic
                + "should not schedule pods that have node selectors with matching value and NotIn "
                + "operator",
            required,
            pod().require(nr(KEY, "NotIn", VALUE)),
            null),
        onePod(
            "B08",
            S,
            logic + "should schedule the pod with Exists operator and defined key",
            required,
            pod().require(nr(KEY, "Exists")),
            ANY_NODE),
        onePod(
            "B09",
            S,
            logic + "should not schedule the pod with DoesNotExists operator and defined key",
            required,
            pod().require(nr(KEY, "DoesNotExist")),
            null),
        onePod(
            "B10",
            S,
            logic
                + "should not schedule pods that have node selectors with different value and In "
                + "operator",
            required,
            pod().require(nr(KEY, "In", "another-value")),
            null),
        onePod(
            "B11",
            S,
            logic
                + "should schedule pods that have node selectors with different value and NotIn "
                + "operator",
            required,
            pod().require(nr(KEY, "NotIn", "another-value")),
            l -> assertThat(l).containsEntry(KEY, VALUE)),
        c(
            "B12",
            S,
            logic + "should schedule compatible pods to the same node",
            () -> {
              PodRequest a = pod().select(KEY, VALUE).req();
              PodRequest b = pod().require(nr(KEY, "In", VALUE)).req();
              Run r = sim().pools(pool().req(KEY, "In", VALUE, "another-value")).run(a, b);
              assertThat(r.nodes())
                  .singleElement()
                  .satisfies(n -> assertThat(n.labels()).containsEntry(KEY, VALUE));
            }),
        c(
            "B13",
            S,
            logic + "should schedule incompatible pods to the different node",
            () -> {
              PodRequest a = pod().select(KEY, VALUE).req();
              PodRequest b = pod().require(nr(KEY, "In", "another-value")).req();
              Run r = sim().pools(pool().req(KEY, "In", VALUE, "another-value")).run(a, b);
              assertThat(r.nodes()).hasSize(2);
              assertThat(r.labels(a)).containsEntry(KEY, VALUE);
              assertThat(r.labels(b)).containsEntry(KEY, "another-value");
            }),
        onePod(
            "B14",
            S,
            logic
                + "Exists operator should not overwrite the existing value (the pool's test-key in "
                + "place of the zone)",
            required,
            pod().require(nr(KEY, "In", "non-existent-value"), nr(KEY, "Exists")),
            null));
  }

  @TestFactory
  Stream<DynamicTest> wellKnownLabels() {
    String known = "Scheduling › Custom Constraints › Well Known Labels › ";
    String validation = "Scheduling › Custom Constraints › Constraints Validation › ";
    return Stream.of(
        onePod(
            "C01",
            S,
            known + "should not schedule nodes with a hostname selector",
            pool(),
            pod().select(HOST, "red-node"),
            null),
        onePod(
            "C02",
            S,
            known + "should schedule compatible requirements with Operator=Gt",
            pool().req(INTEGER, "Gt", "8"),
            pod(),
            l -> assertThat(l).containsEntry(INTEGER, "16")),
        onePod(
            "C03",
            S,
            known + "should schedule compatible requirements with Operator=Lt",
            pool().req(INTEGER, "Lt", "8"),
            pod(),
            l -> assertThat(l).containsEntry(INTEGER, "2")),
        onePod(
            "C04",
            S,
            known + "should schedule compatible requirements with Operator=Gte",
            pool().req(INTEGER, "Gte", "16"),
            pod(),
            l -> assertThat(l).containsEntry(INTEGER, "16")),
        onePod(
            "C05",
            S,
            known + "should schedule compatible requirements with Operator=Lte",
            pool().req(INTEGER, "Lte", "2"),
            pod(),
            l -> assertThat(l).containsEntry(INTEGER, "2")),
        onePod(
            "C06",
            S,
            validation
                + "should not schedule pods that have node selectors with restricted domains",
            pool(),
            pod().require(nr("karpenter.sh/test", "In", "test")),
            null),
        onePod(
            "C07",
            S,
            validation
                + "should schedule pods that have node selectors with label in the kubernetes "
                + "domains",
            pool().req("kubernetes.io/test", "In", VALUE).req("k8s.io/test", "In", VALUE),
            pod(),
            l ->
                assertThat(l)
                    .containsEntry("kubernetes.io/test", VALUE)
                    .containsEntry("k8s.io/test", VALUE)),
        onePod(
            "C08",
            S,
            validation
                + "should schedule pods that have node selectors with label in subdomain from "
                + "kubernetes domains",
            pool()
                .req("subdomain.kubernetes.io/test", "In", VALUE)
                .req("subdomain.k8s.io/test", "In", VALUE),
            pod(),
            l ->
                assertThat(l)
                    .containsEntry("subdomain.kubernetes.io/test", VALUE)
                    .containsEntry("subdomain.k8s.io/test", VALUE)),
        c(
            "C09",
            P,
            "Provisioning › should provision nodes for pods with supported node selectors (but the zone "
                + "ones)",
            () -> supportedConstraints((key, value) -> pod().select(key, value))),
        c(
            "C10",
            P,
            "Provisioning › should provision nodes for pods with supported node affinities (but the zone "
                + "ones)",
            () -> supportedConstraints((key, value) -> pod().require(nr(key, "In", value)))));
  }

  /**
   * Pods constrained to the pool, a type, an arch, an OS schedule; those constrained to what is not
   * there do not.
   */
  private static void supportedConstraints(BiFunction<String, String, PodMaker> constrained) {
    List<PodRequest> schedulable =
        constrained(
            constrained, NP, "default", IT, "default-instance-type", ARCH, "arm64", OS, "linux");
    List<PodRequest> unschedulable =
        constrained(
            constrained,
            NP,
            "unknown",
            IT,
            "unknown",
            ARCH,
            "unknown",
            OS,
            "unknown",
            CT,
            "unknown",
            "foo",
            "bar");
    sim().run(schedulable).scheduled(schedulable);
    sim().run(unschedulable).unschedulable(unschedulable).nothingLaunched();
  }

  /** A pod for each key and value. */
  private static List<PodRequest> constrained(
      BiFunction<String, String, PodMaker> pod, String... keysAndValues) {
    return IntStream.range(0, keysAndValues.length / 2)
        .mapToObj(i -> pod.apply(keysAndValues[2 * i], keysAndValues[2 * i + 1]).req())
        .toList();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Preferential fallback: required terms, preferred node affinity held to, then relaxed
  // ---------------------------------------------------------------------------------------------------------------

  @TestFactory
  Stream<DynamicTest> preferentialFallback() {
    String req = "Scheduling › Preferential Fallback › Required › ";
    String pref = "Scheduling › Preferential Fallback › Preferred › ";
    String prov = "Provisioning › Preferential Fallback › Preferences › ";
    return Stream.of(
        onePod(
            "D01",
            S,
            req + "should not relax the final term (instance types in place of zones)",
            pool().req(IT, "In", "default-instance-type"),
            pod().require(nr(IT, "In", "invalid")),
            null),
        onePod(
            "D03",
            S,
            pref + "should relax all terms",
            pool(),
            pod().prefer(1, nr(ZONE, "In", "invalid")).prefer(1, nr(IT, "In", "invalid")),
            ANY_NODE),
        onePod(
            "D04",
            S,
            pref + "should relax to use lighter weights (instance types in place of zones)",
            pool().req(IT, "In", "default-instance-type", "small-instance-type"),
            pod()
                .prefer(100, nr(IT, "In", "test-zone-3"))
                .prefer(50, nr(IT, "In", "default-instance-type"))
                .prefer(1, nr(IT, "In", "small-instance-type")),
            l -> assertThat(l).containsEntry(IT, "default-instance-type")),
        onePod(
            "D05",
            S,
            pref
                + "should schedule even if preference is conflicting with requirement (instance "
                + "types in place of zones)",
            pool(),
            pod()
                .prefer(1, nr(IT, "NotIn", "small-instance-type"))
                .require(nr(IT, "In", "small-instance-type")),
            l -> assertThat(l).containsEntry(IT, "small-instance-type")),
        onePod(
            "D06",
            S,
            pref + "should schedule even if preference requirements are conflicting",
            pool(),
            pod().prefer(1, nr(ZONE, "In", "invalid"), nr(ZONE, "NotIn", "invalid")),
            ANY_NODE),
        c(
            "D07",
            P,
            prov
                + "should tolerate PreferNoSchedule taint only after trying to relax Affinity terms",
            () -> {
              PodRequest p =
                  pod()
                      .prefer(1, nr(ZONE, "In", "invalid"))
                      .prefer(1, nr(IT, "In", "invalid"))
                      .req();
              Run r = sim().pools(pool().taint("foo", "bar", "PreferNoSchedule")).run(p);
              assertThat(r.node(p).pool().taints())
                  .extracting(Taint::getKey)
                  .containsExactly("foo");
            }),
        c(
            "D08",
            P,
            prov
                + "should ignore node preferredDuringSchedulingIgnoredDuringExecution affinity "
                + "(Entry: kubernetes.io/hostname)",
            () -> {
              PodRequest first = pod().label("app", "foo").cpu("2").req();
              PodRequest preferring =
                  pod().label("app", "baz").cpu("1").prefer(1, nr(HOST, "In", "value-1")).req();
              Run r = sim().run(first, preferring);
              assertThat(r.node(preferring)).isSameAs(r.node(first));
            }));
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Instance type compatibility and binpacking: resources, init containers, sidecars, overhead, too
  // big
  // ---------------------------------------------------------------------------------------------------------------

  @TestFactory
  Stream<DynamicTest> instanceTypeCompatibility() {
    String ctx = "Scheduling › Instance Type Compatibility › ";
    String labels = ctx + "Provider Specific Labels › ";
    Pool bothArchs = pool().req(ARCH, "In", "arm64", "amd64");
    Pool amd = pool().req(ARCH, "In", "amd64");
    return Stream.of(
        onePod(
            "E01",
            S,
            ctx + "should not schedule if requesting more resources than any instance type has",
            pool(),
            pod().cpu("512"),
            null),
        c(
            "E02",
            S,
            ctx + "should launch pods with different archs on different instances",
            () -> {
              PodRequest amd64 = pod().select(ARCH, "amd64").req();
              PodRequest arm64 = pod().select(ARCH, "arm64").req();
              Run r = sim().pools(bothArchs).run(amd64, arm64);
              assertThat(r.node(amd64)).isNotSameAs(r.node(arm64));
              assertThat(r.labels(arm64)).containsEntry(ARCH, "arm64");
            }),
        onePod(
            "E03",
            S,
            ctx
                + "should exclude instance types that are not supported by the pod constraints (node "
                + "affinity/instance type)",
            amd,
            pod().require(nr(IT, "In", "arm-instance-type")),
            null),
        onePod(
            "E04",
            S,
            ctx
                + "should exclude instance types that are not supported by the provider constraints "
                + "(arch)",
            amd,
            pod().cpu("14"),
            null),
        c(
            "E05",
            S,
            ctx
                + "should launch pods with different instance type node selectors on different instances "
                + "(the beta key, normalised as upstream)",
            () -> {
              PodRequest small =
                  pod().select("beta.kubernetes.io/instance-type", "small-instance-type").req();
              PodRequest standard =
                  pod().select("beta.kubernetes.io/instance-type", "default-instance-type").req();
              Run r = sim().run(small, standard);
              assertThat(r.type(small)).isEqualTo("small-instance-type");
              assertThat(r.type(standard)).isEqualTo("default-instance-type");
            }),
        c(
            "E06",
            S,
            ctx
                + "should launch pods with resources that aren't on any single instance type on different "
                + "instances",
            () -> {
              PodRequest one = pod().request("karpenter.sh/super-great-gpu", "1").req();
              PodRequest two = pod().request("karpenter.sh/even-better-gpu", "1").req();
              Run r = sim().types(fakeGpus()).run(one, two);
              assertThat(List.of(r.type(one), r.type(two)))
                  .containsExactly("fake-it-0", "fake-it-1");
            }),
        onePod(
            "E07",
            S,
            ctx
                + "should fail to schedule a pod with resources requests that aren't on a single "
                + "instance type",
            pool(),
            pod()
                .request("karpenter.sh/super-great-gpu", "1")
                .request("karpenter.sh/even-better-gpu", "1"),
            null,
            fakeGpus()),
        c(
            "E08",
            S,
            labels + "should filter instance types that match labels",
            () -> {
              PodRequest large = pod().select(SIZE, "large").req();
              PodRequest small = pod().select(SIZE, "small").req();
              Run r = sim().types(fakeInstanceTypes(5)).run(large, small);
              assertThat(List.of(r.type(large), r.type(small)))
                  .containsExactly("fake-it-4", "fake-it-0");
            }),
        c(
            "E09",
            S,
            labels + "should not schedule with incompatible labels",
            () -> {
              PodRequest a = pod().select(SIZE, "large").select(IT, "fake-it-0").req();
              PodRequest b = pod().select(SIZE, "small").select(IT, "fake-it-4").req();
              sim().types(fakeInstanceTypes(5)).run(a, b).unschedulable(a, b).nothingLaunched();
            }),
        onePod(
            "E10",
            S,
            labels + "should schedule optional labels",
            pool(),
            pod().require(nr(SPECIAL, "Exists")),
            l -> assertThat(l).containsKey(SPECIAL).containsEntry(IT, "fake-it-4"),
            fakeInstanceTypes(5)),
        onePod(
            "E11",
            S,
            labels + "should schedule without optional labels if disallowed",
            pool(),
            pod().require(nr(SPECIAL, "DoesNotExist")),
            l -> assertThat(l).doesNotContainKey(SPECIAL),
            fakeInstanceTypes(5)),
        c(
            "E12",
            P,
            "Provisioning › should provision nodes for accelerators",
            () -> {
              PodRequest a = pod().request(VENDOR_A, "1").req();
              PodRequest b = pod().request(VENDOR_B, "1").req();
              Run r = sim().run(a, b);
              assertThat(List.of(r.type(a), r.type(b)))
                  .containsExactly("gpu-vendor-instance-type", "gpu-vendor-b-instance-type");
            }));
  }

  @TestFactory
  Stream<DynamicTest> binpacking() {
    String ctx = "Scheduling › Binpacking › ";
    Consumer<Map<String, String>> small =
        l -> assertThat(l).containsEntry(IT, "small-instance-type");
    Consumer<Map<String, String>> standard =
        l -> assertThat(l).containsEntry(IT, "default-instance-type");
    return Stream.of(
        onePod(
            "F01",
            S,
            ctx + "should schedule a small pod on the smallest instance",
            pool(),
            pod().mem("100M"),
            small),
        onePod(
            "F02",
            S,
            ctx + "should schedule a small pod on the smallest possible instance type",
            pool(),
            pod().mem("2000M"),
            small),
        onePod(
            "F03",
            S,
            ctx + "should take pod runtime class into consideration (the overhead admission sets)",
            pool(),
            pod().cpu("1").overhead("2"),
            standard),
        c(
            "F04",
            S,
            ctx + "should schedule multiple small pods on the smallest possible instance type",
            () -> {
              Run r = sim().run(many(5, () -> pod().mem("10M")));
              assertThat(r.nodes())
                  .singleElement()
                  .satisfies(n -> assertThat(n.type()).isEqualTo(SMALL));
            }),
        c(
            "F05",
            S,
            ctx + "should create new nodes when a node is at capacity",
            () -> {
              Run r = sim().run(many(40, () -> pod().select(ARCH, "amd64").mem("1.8G")));
              assertThat(r.nodes())
                  .hasSize(20)
                  .allSatisfy(n -> assertThat(n.type()).isEqualTo(DEFAULT_TYPE));
            }),
        c(
            "F06",
            S,
            ctx + "should pack small and large pods together",
            () -> {
              // Two large pods fill the largest amd64 type but for room for one small one: twenty
              // nodes in all.
              Run r =
                  sim()
                      .run(
                          with(
                              many(40, () -> pod().select(ARCH, "amd64").mem("1.8G")),
                              many(20, () -> pod().select(ARCH, "amd64").mem("400M"))
                                  .toArray(PodRequest[]::new)));
              assertThat(r.nodes())
                  .hasSize(20)
                  .allSatisfy(n -> assertThat(n.type()).isEqualTo(DEFAULT_TYPE));
            }),
        c(
            "F07",
            S,
            ctx + "should pack nodes tightly",
            () -> {
              PodRequest big = pod().cpu("4.5").req();
              PodRequest little = pod().cpu("1").req();
              Run r = sim().types(fakeInstanceTypes(5)).run(big, little);
              assertThat(r.nodes()).hasSize(2);
              assertThat(r.type(big)).isNotEqualTo(r.type(little));
            }),
        onePod(
            "F08",
            S,
            ctx + "should handle zero-quantity resource requests",
            pool(),
            pod().request("foo.com/weird-resources", "0"),
            ANY_NODE),
        onePod(
            "F09",
            S,
            ctx + "should not schedule pods that exceed every instance type's capacity",
            pool(),
            pod().mem("2Ti"),
            null),
        c(
            "F10",
            S,
            ctx + "should create new nodes when a node is at capacity due to pod limits per node",
            () -> {
              Run r = sim().run(many(25, () -> pod().select(ARCH, "amd64").cpu("1m").mem("1m")));
              assertThat(r.nodes())
                  .hasSize(5)
                  .allSatisfy(n -> assertThat(n.type()).isEqualTo(SMALL));
            }),
        onePod(
            "F11",
            S,
            ctx + "should take into account initContainer resource requests when binpacking",
            pool(),
            pod().cpu("1").mem("1Gi").init(false, "2", "1Gi"),
            standard),
        onePod(
            "F12",
            S,
            ctx
                + "should not schedule pods when initContainer resource requests are greater than "
                + "available instance types",
            pool(),
            pod().cpu("1").mem("1Gi").init(false, "2", "1Ti"),
            null),
        onePod(
            "F13",
            S,
            ctx + "should select for valid instance types, regardless of price",
            pool(),
            pod().cpu("1m").mem("1Mi"),
            l -> assertThat(l).containsEntry(IT, "large"),
            List.of(
                priced(fake("medium", "amd64", 2, 2 * GI), 3.0),
                priced(fake("small", "amd64", 1, GI), 2.0),
                priced(fake("large", "amd64", 4, 4 * GI), 1.0))),
        c(
            "F14",
            P,
            "Provisioning › Should provision nodes for multiple pods",
            () -> {
              List<PodRequest> pods = many(100, UpstreamSchedulingCasesTest::pod);
              assertThat(sim().run(pods).scheduled(pods).nodes()).isNotEmpty();
            }),
        c(
            "F15",
            P,
            "Provisioning › should provision multiple nodes when maxPods is set",
            () -> {
              List<PodRequest> pods = many(3, UpstreamSchedulingCasesTest::pod);
              Run r =
                  sim()
                      .pools(pool().req(IT, "In", "single-pod-instance-type"))
                      .run(pods)
                      .scheduled(pods);
              assertThat(r.nodes()).hasSize(3);
            }),
        sidecar(
            "G01",
            "when initcontainer comes first",
            pod().cpu("6").mem("2Gi").init(false, "10", "4Gi").init(true, "4.9", "2.9Gi")),
        sidecar(
            "G02",
            "when sidecar container comes first and init container resources are smaller than "
                + "container resources",
            pod().cpu("6").mem("2Gi").init(true, "4.9", "2.9Gi").init(false, "5", "1Gi")),
        sidecar(
            "G03",
            "when sidecar container comes first and init container resources are bigger than "
                + "container resources",
            pod().cpu("5").mem("1Gi").init(true, "4.9", "2.9Gi").init(false, "6", "2Gi")));
  }

  /**
   * Three types just apart: with the pod's requests summed right, the 11-cpu 5Gi one; wrong, a
   * neighbour.
   */
  private static DynamicTest sidecar(String code, String when, PodMaker pod) {
    return c(
        code,
        P,
        "Provisioning › should schedule based on the max resource requests of containers and "
            + "initContainers with sidecar containers "
            + when,
        () -> {
          List<InstanceType> types = new ArrayList<>(DEFAULT_TYPES);
          for (int cpus = 10; cpus <= 12; cpus++) {
            types.add(fake("example-" + cpus, "arch", cpus, (cpus - 6) * GI));
          }
          PodRequest p = pod.req();
          Resources allocatable = sim().types(types).run(p).node(p).type().allocatable();
          assertThat(List.of(allocatable.cpuMilli(), allocatable.memoryBytes()))
              .containsExactly(11_000L, 5 * GI);
        });
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Nodes on their way or there: first fit onto them before launching
  // ---------------------------------------------------------------------------------------------------------------

  @TestFactory
  Stream<DynamicTest> inFlightAndExistingNodes() {
    String ctx = "Scheduling › In-Flight Nodes › ";
    String existing = "Scheduling › Existing Nodes › ";
    InstanceType unowned = fake("unowned", "amd64", "linux", 10, 100 * GI, 110, Map.of());
    return Stream.of(
        c(
            "H01",
            S,
            ctx
                + "should not launch a second node if there is an in-flight node that can support the pod",
            () -> {
              PlannedNode there = existing(SMALL, Map.of(), pod().cpu("10m").req());
              PodRequest second = pod().cpu("10m").req();
              Run r = sim().inFlight(there).run(second);
              assertThat(r.existingNodeOf(second)).isSameAs(there);
              r.nothingLaunched();
            }),
        c(
            "H02",
            S,
            ctx
                + "should not launch a second node if there is an in-flight node that can support the pod "
                + "(node selectors) (its new node for the third pod needs zone offerings: only not the in-flight one)",
            () -> {
              PlannedNode there =
                  existing(
                      SMALL,
                      Map.of(ZONE, "test-zone-2"),
                      pod().cpu("10m").require(nr(ZONE, "In", "test-zone-2")).req());
              PodRequest second =
                  pod().cpu("10m").require(nr(ZONE, "In", "test-zone-1", "test-zone-2")).req();
              PodRequest third =
                  pod().cpu("10m").require(nr(ZONE, "In", "test-zone-1", "test-zone-3")).req();
              Run r = sim().inFlight(there).run(second, third);
              assertThat(r.existingNodeOf(second)).isSameAs(there);
              assertThat(r.existingNodeOf(third)).isNull();
            }),
        c(
            "H03",
            S,
            ctx + "should launch a second node if a pod won't fit on the existingNodes node",
            () -> {
              PlannedNode there = existing(SMALL, Map.of(), pod().cpu("1001m").req());
              PodRequest second = pod().cpu("1").req();
              Run r = sim().inFlight(there).run(second);
              assertThat(r.existingNodeOf(second)).isNull();
              assertThat(r.nodes()).hasSize(1);
            }),
        c(
            "H04",
            S,
            ctx
                + "should launch a second node if a pod isn't compatible with the existingNodes node (node "
                + "selector)",
            () -> {
              PlannedNode there = existing(SMALL, Map.of(), pod().cpu("10m").req());
              PodRequest arm = pod().select(ARCH, "arm64").req();
              Run r = sim().inFlight(there).run(arm);
              assertThat(r.existingNodeOf(arm)).isNull();
              assertThat(r.type(arm)).isEqualTo("arm-instance-type");
            }),
        c(
            "H05",
            S,
            existing + "should schedule a pod to an existing node unowned by Karpenter",
            () -> {
              PlannedNode there = existing(pool("unowned").view(), unowned, Map.of());
              PodRequest p = pod().cpu("10m").req();
              Run r = sim().inFlight(there).run(p);
              assertThat(r.existingNodeOf(p)).isSameAs(there);
              r.nothingLaunched();
            }),
        c(
            "H06",
            S,
            existing + "should schedule multiple pods to an existing node unowned by Karpenter",
            () -> {
              PlannedNode there = existing(pool("unowned").view(), unowned, Map.of());
              List<PodRequest> pods = many(100, () -> pod().cpu("10m"));
              Run r = sim().inFlight(there).run(pods);
              assertThat(pods).allSatisfy(p -> assertThat(r.existingNodeOf(p)).isSameAs(there));
              r.nothingLaunched();
            }),
        c(
            "H07",
            S,
            ctx + "Topology › should balance pods across hostnames with in-flight nodes",
            () -> {
              Supplier<PodMaker> spread =
                  () -> pod().labels(TEST).spread(spread(HOST, 1, DNS, TEST));
              PlannedNode[] there =
                  IntStream.range(0, 4)
                      .mapToObj(i -> existing(SMALL, Map.of(), spread.get().req()))
                      .toArray(PlannedNode[]::new);
              List<PodRequest> pods = many(5, spread);
              Run r = sim().inFlight(there).run(pods);
              assertThat(r.counts(p -> true)).containsExactly(1, 1, 1, 1, 1);
              assertThat(r.plan.onExisting()).isEmpty();
            }),
        c(
            "H08",
            S,
            ctx
                + "Topology › should balance pods across zones with in-flight nodes (its second round: the "
                + "first needs zone offerings)",
            () -> {
              Supplier<PodMaker> spread =
                  () -> pod().labels(TEST).spread(spread(ZONE, 1, DNS, TEST));
              PlannedNode one = existing(SMALL, Map.of(ZONE, "test-zone-1"), spread.get().req());
              PlannedNode two = existing(SMALL, Map.of(ZONE, "test-zone-2"), spread.get().req());
              PlannedNode three =
                  existing(
                      SMALL, Map.of(ZONE, "test-zone-3"), spread.get().req(), spread.get().req());
              Run r = sim().inFlight(one, two, three).run(many(5, spread));
              r.nothingLaunched();
              assertThat(r.byDomain(ZONE, p -> p.labels().equals(TEST)))
                  .isEqualTo(Map.of("test-zone-1", 3, "test-zone-2", 3, "test-zone-3", 3));
            }));
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Limits, DaemonSets, NodePools by weight
  // ---------------------------------------------------------------------------------------------------------------

  @TestFactory
  Stream<DynamicTest> limitsAndDaemonSets() {
    String limits = "Provisioning › Resource Limits › ";
    String ds = "Provisioning › Daemonsets › ";
    Supplier<PodMaker> apart =
        () -> pod().label("app", "foo").antiAffinity(term(HOST, Map.of("app", "foo"))).cpu("1.5");
    Consumer<Map<String, String>> small =
        l -> assertThat(l).containsEntry(IT, "small-instance-type");
    Consumer<Map<String, String>> standard =
        l -> assertThat(l).containsEntry(IT, "default-instance-type");
    return Stream.of(
        onePod(
            "I01",
            P,
            limits
                + "should not schedule when limits are exceeded (a NodeClaim of 100 cpu against 20)",
            pool().remaining(cpuLeft(20_000 - 100_000)),
            pod(),
            null),
        onePod(
            "I02",
            P,
            limits + "should schedule if limits would be met",
            pool().remaining(cpuLeft(2000)),
            pod().cpu("1.75"),
            l -> assertThat(l).containsEntry(IT, "small-instance-type")),
        c(
            "I03",
            P,
            limits + "should partially schedule if limits would be exceeded",
            () -> {
              List<PodRequest> pods = many(2, apart);
              Run r = sim().pools(pool().remaining(cpuLeft(3000))).run(pods);
              assertThat(pods.stream().filter(r::isScheduled)).hasSize(1);
              assertThat(r.plan.unschedulable()).hasSize(1);
            }),
        onePod(
            "I04",
            P,
            limits + "should not schedule if limits would be exceeded",
            pool().remaining(cpuLeft(2000)),
            pod().cpu("2.1"),
            null),
        onePod(
            "I05",
            P,
            limits + "should not schedule if limits would be exceeded (GPU)",
            pool().remaining(new Resources(UNLIMITED, UNLIMITED, Map.of("pods", 1L))),
            pod().request(VENDOR_A, "1"),
            null),
        c(
            "I06",
            P,
            limits
                + "should not schedule to a nodepool after a scheduling round if limits would be "
                + "exceeded",
            () -> {
              PlannedNode first = existing(SMALL, Map.of(), pod().cpu("1.75").req());
              PodRequest second = pod().cpu("1.75").req();
              sim()
                  .pools(pool().remaining(cpuLeft(2000 - 2000)))
                  .inFlight(first)
                  .run(second)
                  .unschedulable(second)
                  .nothingLaunched();
            }),
        c(
            "I07",
            P,
            limits
                + "should partially schedule if limits would be exceeded + Multiple NodePools › "
                + "Weighted NodePools › should schedule to the nodepool with the highest priority always: a pool its "
                + "limit stops, the next by weight",
            () -> {
              // As upstream's subtractMax: a new node counts its roomiest option against the limit
              // (here the
              // 4-cpu default type, all of the 4 cpu left), so one node in the heavy pool, the rest
              // in the next.
              List<PodRequest> pods = many(3, apart);
              Run r =
                  sim()
                      .pools(
                          pool("light").weight(10),
                          pool("heavy").weight(100).remaining(cpuLeft(4000)))
                      .run(pods);
              assertThat(pods.stream().map(p -> r.node(p).pool().name()).sorted())
                  .containsExactly("heavy", "light", "light");
            }),
        onePod(
            "J01",
            P,
            ds + "should account for daemonsets",
            pool(),
            pod().cpu("1").mem("1Gi"),
            standard,
            pod().cpu("2").mem("2Gi")),
        onePod(
            "J02",
            P,
            ds + "should not schedule if daemonset overhead is too large",
            pool(),
            pod(),
            null,
            pod().cpu("10000").mem("10000Gi")),
        onePod(
            "J03",
            P,
            ds
                + "should schedule based on the max resource requests of containers and initContainers "
                + "(requests as the API server defaults them from limits)",
            pool(),
            pod(),
            standard,
            pod().cpu("1").mem("1Gi").init(false, "3", "3Gi")),
        onePod(
            "J04",
            P,
            ds
                + "should not schedule if combined max resources are too large for any node (requests "
                + "as the API server defaults them from limits)",
            pool(),
            pod(),
            null,
            pod().cpu("1").mem("1Gi").init(false, "1", "10000Gi")),
        onePod(
            "J05",
            P,
            ds + "should be able to schedule pods if resource requests and limits are not defined",
            pool(),
            pod(),
            ANY_NODE,
            pod()),
        onePod(
            "J06",
            P,
            ds + "should ignore daemonsets without matching tolerations",
            pool().taint("foo", "bar", "NoSchedule"),
            pod().tolerate(null, "Exists", null, null).cpu("1").mem("1Gi"),
            small,
            pod().cpu("2").mem("2Gi")),
        onePod(
            "J07",
            P,
            ds + "should ignore daemonsets with an invalid selector",
            pool(),
            pod().cpu("1").mem("1Gi"),
            small,
            pod().select("node", "invalid").cpu("2").mem("2Gi")),
        onePod(
            "J08",
            P,
            ds + "should ignore daemonsets when no instance types meet the daemonset requirements",
            pool(),
            pod().cpu("1").mem("1Gi"),
            small,
            pod().require(nr(IT, "In", "non-existent-instance-type")).cpu("2").mem("2Gi")),
        onePod(
            "J09",
            P,
            ds
                + "should account for daemonsets with a custom label nodeSelector that matches the "
                + "nodepool",
            pool().label("purpose", "monitoring"),
            pod().cpu("1").mem("1Gi"),
            standard,
            pod().select("purpose", "monitoring").cpu("2").mem("2Gi")),
        c(
            "J10",
            P,
            ds + "should filter out daemonsets based on instance type requirements",
            () -> {
              PodRequest p = pod().cpu("1").mem("1Gi").req();
              Run r =
                  sim()
                      .daemonSet(pod().require(nr(SIZE, "In", "small")).cpu("1"))
                      .daemonSet(pod().require(nr(SIZE, "In", "large")).cpu("10"))
                      .run(p);
              assertThat(r.type(p)).isEqualTo("default-instance-type");
            }),
        onePod(
            "J12",
            P,
            ds + "should consider a daemonset schedulable with multiple node affinity terms",
            pool().label("foo", "bar"),
            pod().cpu("1").mem("1Gi"),
            standard,
            pod()
                .require(nr("foo", "In", "voo"))
                .require(nr("foo", "In", "bar"))
                .cpu("2")
                .mem("2Gi")),
        onePod(
            "J13",
            P,
            ds
                + "should consider a daemonset schedulable with an incompatible node affinity preference",
            pool(),
            pod().cpu("1").mem("1Gi"),
            standard,
            pod().prefer(10, nr("foo", "In", "bar")).cpu("2").mem("2Gi")),
        c(
            "J16",
            P,
            ds + "should account for daemonset hostports",
            () -> {
              PodRequest p = pod().hostPort(null, null, 8080).req();
              sim()
                  .daemonSet(pod().cpu("1").hostPort(null, null, 8080))
                  .run(p)
                  .unschedulable(p)
                  .nothingLaunched();
            }),
        onePod(
            "J14",
            P,
            ds + "should consider a daemonset schedulable with a PreferNoSchedule taint",
            pool().taint("test", null, "PreferNoSchedule"),
            pod().cpu("1").mem("1Gi"),
            standard,
            pod().cpu("2").mem("2Gi")),
        c(
            "J15",
            P,
            ds
                + "should not account for daemonset hostports when daemonset would not schedule on selected "
                + "node",
            () -> {
              PodRequest p =
                  pod()
                      .cpu("1")
                      .mem("1Gi")
                      .require(nr(SIZE, "In", "small"))
                      .hostPort(null, null, 8080)
                      .req();
              Run r =
                  sim()
                      .daemonSet(
                          pod()
                              .cpu("4")
                              .mem("4Gi")
                              .require(nr(SIZE, "In", "large"))
                              .hostPort(null, null, 8080))
                      .daemonSet(
                          pod()
                              .cpu("2")
                              .mem("2Gi")
                              .require(nr(SIZE, "In", "small"))
                              .hostPort(null, null, 8081))
                      .run(p);
              assertThat(r.labels(p))
                  .containsEntry(SIZE, "small")
                  .containsEntry(IT, "default-instance-type");
            }));
  }

  @TestFactory
  Stream<DynamicTest> taintsAndNodePools() {
    String taints = "Taints › ";
    String pools = "Provisioning › Multiple NodePools › ";
    return Stream.of(
        c(
            "K06",
            P,
            pools
                + "should not match NodePool with PreferNoSchedule taint when other NodePool match",
            () -> {
              PodRequest p = pod().req();
              Run r =
                  sim()
                      .pools(pool("tainted").taint("foo", "bar", "PreferNoSchedule"), pool("plain"))
                      .run(p);
              assertThat(r.labels(p)).containsEntry(NP, "plain");
            }),
        c(
            "K01",
            P,
            "Provisioning › Taints › should schedule pods that tolerate taints",
            () -> {
              String gpu = "nvidia.com/gpu";
              List<PodRequest> pods =
                  List.of(
                      pod().tolerate(gpu, "Equal", "true", "NoSchedule").req(),
                      pod().tolerate(gpu, "Exists", null, "NoSchedule").req(),
                      pod().tolerate(gpu, "Exists", null, null).req(),
                      pod().tolerate(null, "Exists", null, null).req());
              sim().pools(pool().taint(gpu, "true", "NoSchedule")).run(pods).scheduled(pods);
            }),
        c(
            "K02",
            T,
            taints + "should schedule pods that tolerate NodePool constraints",
            () -> {
              List<PodRequest> tolerating =
                  List.of(
                      pod().tolerate(KEY, "Exists", null, "NoSchedule").req(),
                      pod().tolerate(KEY, "Equal", VALUE, "NoSchedule").req());
              List<PodRequest> others =
                  List.of(
                      pod().req(),
                      pod().tolerate("invalid", "Exists", null, null).req(),
                      pod().tolerate(KEY, "Equal", null, "NoSchedule").req());
              Pool tainted = pool().taint(KEY, VALUE, "NoSchedule");
              sim().pools(tainted).run(tolerating).scheduled(tolerating);
              sim().pools(tainted).run(others).unschedulable(others).nothingLaunched();
            }),
        c(
            "K03",
            T,
            taints + "should taint nodes with NodePool taints",
            () -> {
              PodRequest p = pod().tolerate(null, "Exists", null, "NoSchedule").req();
              Run r = sim().pools(pool().taint("test", "bar", "NoSchedule")).run(p);
              assertThat(r.node(p).pool().taints())
                  .extracting(Taint::getKey)
                  .containsExactly("test");
            }),
        c(
            "K05",
            T,
            taints + "should not generate taints for OpExists",
            () -> {
              PodRequest p = pod().tolerate(KEY, "Exists", null, "NoExecute").req();
              assertThat(sim().run(p).node(p).pool().taints()).isEmpty();
            }),
        c(
            "L01",
            P,
            pools + "should schedule to an explicitly selected NodePool",
            () -> {
              PodRequest p = pod().select(NP, "selected").req();
              assertThat(sim().pools(pool("other"), pool("selected")).run(p).node(p).pool().name())
                  .isEqualTo("selected");
            }),
        c(
            "L02",
            P,
            pools + "should schedule to a NodePool by labels",
            () -> {
              PodRequest p = pod().select("foo", "bar").req();
              assertThat(
                      sim()
                          .pools(pool("other"), pool("labelled").label("foo", "bar"))
                          .run(p)
                          .node(p)
                          .pool()
                          .name())
                  .isEqualTo("labelled");
            }),
        c(
            "L03",
            P,
            pools
                + "Weighted NodePools › should schedule to the nodepool with the highest priority always",
            () -> {
              List<PodRequest> pods = many(3, UpstreamSchedulingCasesTest::pod);
              Run r =
                  sim()
                      .pools(pool("w0"), pool("w20").weight(20), pool("w100").weight(100))
                      .run(pods);
              assertThat(pods)
                  .allSatisfy(p -> assertThat(r.node(p).pool().name()).isEqualTo("w100"));
            }),
        c(
            "L04",
            P,
            pools
                + "Weighted NodePools › should schedule to explicitly selected nodepool even if other "
                + "nodePools are higher priority",
            () -> {
              PodRequest p = pod().select(NP, "targeted").req();
              Run r =
                  sim()
                      .pools(pool("targeted"), pool("w20").weight(20), pool("w100").weight(100))
                      .run(p);
              assertThat(r.node(p).pool().name()).isEqualTo("targeted");
            }));
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Topology spread
  // ---------------------------------------------------------------------------------------------------------------

  @TestFactory
  Stream<DynamicTest> topologySpread() {
    String host = "Topology › Hostname › ";
    String ct = "Topology › CapacityType › ";
    String keys = "Topology › MatchLabelKeys › ";
    Predicate<PodRequest> test = p -> p.labels().equals(TEST);
    return Stream.of(
        c(
            "M01",
            T,
            "Topology › should ignore unknown topology keys",
            () -> {
              PodRequest spread = pod().labels(TEST).spread(spread("unknown", 1, DNS, TEST)).req();
              PodRequest plain = pod().req();
              sim().run(spread, plain).unschedulable(spread).scheduled(List.of(plain));
            }),
        c(
            "M02",
            T,
            host + "should balance pods across nodes",
            () ->
                assertThat(
                        sim()
                            .run(
                                many(
                                    4, () -> pod().labels(TEST).spread(spread(HOST, 1, DNS, TEST))))
                            .counts(test))
                    .containsExactly(1, 1, 1, 1)),
        c(
            "M03",
            T,
            host + "should balance pods on the same hostname up to maxskew",
            () ->
                assertThat(
                        sim()
                            .run(
                                many(
                                    4, () -> pod().labels(TEST).spread(spread(HOST, 4, DNS, TEST))))
                            .counts(test))
                    .containsExactly(4)),
        c(
            "M04",
            T,
            host + "balance multiple deployments with hostname topology spread",
            () -> {
              List<PodRequest> pods =
                  Stream.of("app1", "app1", "app2", "app2")
                      .map(
                          app ->
                              pod()
                                  .label("app", app)
                                  .spread(spread(HOST, 1, DNS, Map.of("app", app)))
                                  .req())
                      .toList();
              Run r = sim().run(pods).scheduled(pods);
              assertThat(r.nodes()).hasSize(2);
            }),
        c(
            "M05",
            T,
            host + "balance multiple deployments with hostname topology spread & varying arch",
            () -> {
              List<PodRequest> pods =
                  Stream.of("app1/amd64", "app1/amd64", "app2/arm64", "app2/arm64")
                      .map(
                          s -> {
                            String[] app = s.split("/");
                            return pod()
                                .label("app", app[0])
                                .require(nr(ARCH, "In", app[1]))
                                .spread(spread(HOST, 1, DNS, Map.of("app", app[0])))
                                .req();
                          })
                      .toList();
              Run r = sim().run(pods).scheduled(pods);
              assertThat(r.nodes()).hasSize(4);
            }),
        c(
            "M06",
            T,
            "Topology › Zonal › should handle interdependent selectors (its constraint is on the hostname)",
            () ->
                assertThat(
                        sim().run(many(5, () -> pod().spread(spread(HOST, 1, DNS, TEST)))).nodes())
                    .hasSize(1)),
        c(
            "M07",
            T,
            keys + "should support matchLabelKeys",
            () -> {
              List<PodRequest> pods =
                  Stream.of("value-a", "value-a", "value-b", "value-b")
                      .map(
                          v ->
                              pod()
                                  .labels(TEST)
                                  .label("test-label", v)
                                  .spread(spread(HOST, 1, DNS, TEST, "test-label"))
                                  .req())
                      .toList();
              Run r = sim().run(pods);
              assertThat(r.counts(p -> p.labels().get("test") != null)).containsExactly(2, 2);
              assertThat(r.nodes())
                  .allSatisfy(
                      n ->
                          assertThat(n.pods())
                              .extracting(p -> p.labels().get("test-label"))
                              .containsExactlyInAnyOrder("value-a", "value-b"));
            }),
        c(
            "M08",
            T,
            keys + "should ignore unknown labels specified in matchLabelKeys",
            () ->
                assertThat(
                        sim()
                            .run(
                                many(
                                    4,
                                    () ->
                                        pod()
                                            .labels(TEST)
                                            .spread(spread(HOST, 1, DNS, TEST, "test-label"))))
                            .counts(test))
                    .containsExactly(1, 1, 1, 1)),
        c(
            "M09",
            T,
            ct
                + "should not violate max-skew when unsat = do not schedule (capacity type) (the spot node "
                + "of its first round as a node there)",
            () -> capacityTypeSkew(DNS, 2)),
        c(
            "M10",
            T,
            ct
                + "should violate max-skew when unsat = schedule anyway (capacity type) (the spot node of its "
                + "first round as a node there)",
            () -> capacityTypeSkew(ANYWAY, 5)),
        c(
            "M11",
            T,
            ct
                + "should only count running/scheduled pods with matching labels scheduled to nodes with a "
                + "corresponding domain",
            () -> {
              PlannedNode spot =
                  existing(
                      pool().view(),
                      DEFAULT_TYPE,
                      Map.of(CT, "spot"),
                      pod().req(),
                      pod().ns("wrong-namespace").labels(TEST).req(),
                      pod().labels(TEST).req(),
                      pod().labels(TEST).req());
              PlannedNode onDemand =
                  existing(DEFAULT_TYPE, Map.of(CT, "on-demand"), pod().labels(TEST).req());
              PlannedNode noDomain =
                  new PlannedNode(
                      pool().view(),
                      DEFAULT_TYPE,
                      List.of(pod().labels(TEST).req()),
                      DEFAULT_TYPE.allocatable(),
                      Map.of(HOST, "third"));
              List<PodRequest> pending =
                  many(2, () -> pod().labels(TEST).spread(spread(CT, 1, DNS, TEST)));
              Run r = sim().inFlight(spot, onDemand, noDomain).run(pending).scheduled(pending);
              assertThat(
                      r.byDomain(CT, p -> p.namespace().equals("default") && test.test(p)).values())
                  .containsExactlyInAnyOrder(2, 3);
              assertThat(pending)
                  .allSatisfy(p -> assertThat(r.existingNodeOf(p)).isNotSameAs(noDomain));
            }),
        c(
            "M12",
            T,
            ct + "should balance pods across arch (no constraints)",
            () -> {
              PlannedNode amd = full(existing(SMALL, Map.of(), pod().labels(TEST).req()));
              List<PodRequest> pods =
                  many(5, () -> pod().labels(TEST).cpu("2").spread(spread(ARCH, 1, DNS, TEST)));
              Run r = sim().pools(pool().req(ARCH, "In", "arm64")).inFlight(amd).run(pods);
              assertThat(r.byDomain(ARCH, test)).isEqualTo(Map.of("amd64", 1, "arm64", 2));
              assertThat(r.plan.unschedulable()).hasSize(3);
            }));
  }

  /**
   * A spot node runs one pod of the spread; the pool now launches on-demand only; five more 1.1-cpu
   * pods: with {@code DoNotSchedule} two go on-demand (a skew of one) and three wait, with {@code
   * ScheduleAnyway} all five go.
   */
  private static void capacityTypeSkew(String whenUnsatisfiable, int onDemand) {
    Supplier<PodMaker> spread =
        () -> pod().labels(TEST).cpu("1.1").spread(spread(CT, 1, whenUnsatisfiable, TEST));
    PlannedNode spot = existing(SMALL, Map.of(CT, "spot"), spread.get().req());
    Run r = sim().pools(pool().req(CT, "In", "on-demand")).inFlight(spot).run(many(5, spread));
    assertThat(r.byDomain(CT, p -> p.labels().equals(TEST)))
        .isEqualTo(Map.of("spot", 1, "on-demand", onDemand));
    assertThat(r.plan.unschedulable()).hasSize(5 - onDemand);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Pod affinity and anti-affinity
  // ---------------------------------------------------------------------------------------------------------------

  @TestFactory
  Stream<DynamicTest> podAffinity() {
    String ctx = "Topology › Pod Affinity/Anti-Affinity › ";
    Supplier<PodMaker> spreadOverHosts =
        () -> pod().labels(TEST).spread(spread(HOST, 1, DNS, TEST));
    return Stream.of(
        onePod(
            "N01",
            T,
            ctx + "should schedule a pod with empty pod affinity and anti-affinity",
            pool(),
            pod().emptyPodAffinity(),
            ANY_NODE),
        c(
            "N02",
            T,
            ctx + "should respect pod affinity (hostname)",
            () -> {
              PodRequest target = pod().labels(S2).req();
              PodRequest follower = pod().affinity(term(HOST, S2)).req();
              Run r = sim().run(with(many(10, spreadOverHosts), target, follower));
              assertThat(r.node(follower)).isSameAs(r.node(target));
            }),
        c(
            "N04",
            T,
            ctx + "should respect self pod affinity (hostname)",
            () -> {
              Run r = sim().run(many(3, () -> pod().labels(S2).affinity(term(HOST, S2))));
              assertThat(r.counts(p -> true)).containsExactly(3);
            }),
        c(
            "N05",
            T,
            ctx
                + "should respect self pod affinity for first empty topology domain only (hostname)",
            () -> {
              Supplier<PodMaker> together = () -> pod().labels(S2).affinity(term(HOST, S2));
              Run r = sim().run(many(10, together));
              assertThat(r.counts(p -> true)).containsExactly(5);
              assertThat(r.plan.unschedulable()).hasSize(5);
              List<PodRequest> next = many(10, together);
              sim().inFlight(r.nodes().get(0)).run(next).unschedulable(next).nothingLaunched();
            }),
        c(
            "N06",
            T,
            ctx + "should allow violation of preferred pod affinity",
            () -> {
              PodRequest preferring = pod().preferAffinity(50, term(HOST, S2)).req();
              sim().run(with(many(10, spreadOverHosts), preferring)).scheduled(List.of(preferring));
            }),
        c(
            "N07",
            T,
            ctx + "should separate nodes using simple pod anti-affinity on hostname (both orders)",
            () -> {
              for (boolean avoiderFirst : new boolean[] {true, false}) {
                PodRequest target = pod().labels(S2).req();
                PodRequest avoider = pod().antiAffinity(term(HOST, S2)).req();
                Run r =
                    sim().run(avoiderFirst ? List.of(avoider, target) : List.of(target, avoider));
                assertThat(r.node(avoider)).isNotSameAs(r.node(target));
              }
            }),
        c(
            "N08",
            T,
            ctx + "should not violate pod anti-affinity (arch)",
            () -> {
              PodRequest arm =
                  pod()
                      .labels(S2)
                      .cpu("2")
                      .select(ARCH, "arm64")
                      .spread(spread(HOST, 1, DNS, S2))
                      .req();
              PodRequest avoider =
                  pod()
                      .labels(S2)
                      .cpu("1")
                      .spread(spread(HOST, 1, DNS, S2))
                      .antiAffinity(term(ARCH, S2))
                      .req();
              Run r = sim().run(arm, avoider);
              assertThat(r.labels(avoider).get(ARCH)).isNotEqualTo(r.labels(arm).get(ARCH));
            }),
        c(
            "N09",
            T,
            ctx + "should violate preferred pod anti-affinity on zone (inverse w/existing nodes)",
            () -> {
              PlannedNode[] zones =
                  Stream.of("test-zone-1", "test-zone-2", "test-zone-3")
                      .map(
                          z ->
                              existing(
                                  DEFAULT_TYPE,
                                  Map.of(ZONE, z),
                                  pod()
                                      .cpu("2")
                                      .select(ZONE, z)
                                      .preferAntiAffinity(10, term(ZONE, S2))
                                      .req()))
                      .toArray(PlannedNode[]::new);
              PodRequest target = pod().labels(S2).req();
              sim().inFlight(zones).run(target).scheduled(List.of(target));
            }),
        c(
            "N03",
            T,
            ctx + "should respect pod affinity (arch)",
            () -> {
              TopologySpreadConstraint oneEach = spread(HOST, 1, DNS, S2);
              PodRequest first =
                  pod().labels(S2).spread(oneEach).cpu("2").select(ARCH, "arm64").req();
              PodRequest second =
                  pod().labels(S2).spread(oneEach).cpu("1").affinity(term(ARCH, S2)).req();
              Run r = sim().run(first, second);
              assertThat(r.labels(second))
                  .containsEntry(ARCH, r.labels(first).get(ARCH)); // the same arch
              assertThat(r.node(first))
                  .isNotSameAs(r.node(second)); // but, spread, not the same node
            }),
        c(
            "N10",
            T,
            ctx
                + "should allow violation of a pod affinity preference with a conflicting required "
                + "constraint",
            () -> {
              List<PodRequest> spread =
                  many(3, () -> spreadOverHosts.get().preferAffinity(50, term(HOST, S2)));
              PodRequest target = pod().labels(S2).req();
              Run r = sim().run(with(spread, target)).scheduled(with(spread, target));
              assertThat(r.counts(p -> p.labels().equals(TEST))).containsExactly(1, 1, 1);
            }),
        c(
            "N11",
            T,
            ctx
                + "should support pod affinity with zone topology (unconstrained target) (its first round: "
                + "the second needs zone offerings)",
            () -> {
              List<PodRequest> followers = many(10, () -> pod().affinity(term(ZONE, S2)));
              PodRequest target = pod().labels(S2).req();
              sim()
                  .run(with(followers, target))
                  .unschedulable(followers)
                  .scheduled(List.of(target));
            }),
        c(
            "N12",
            T,
            ctx + "should handle multiple dependent affinities",
            () -> {
              List<PodRequest> chain = dependentChain();
              sim().run(chain).scheduled(chain);
            }),
        c(
            "N13",
            T,
            ctx + "should handle multiple dependent affinities (pods in reverse order)",
            () -> {
              List<PodRequest> chain = new ArrayList<>(dependentChain());
              Collections.reverse(chain);
              sim().run(chain).scheduled(chain);
            }),
        c(
            "N14",
            T,
            ctx + "should fail to schedule pods with unsatisfiable dependencies",
            () -> {
              PodRequest db =
                  pod()
                      .labels(Map.of("type", "db", "spread", "spread"))
                      .affinity(term(HOST, Map.of("type", "web", "spread", "spread")))
                      .req();
              sim().run(db).unschedulable(db).nothingLaunched();
            }),
        c(
            "N15",
            T,
            ctx + "should filter pod affinity topologies by namespace, no matching pods",
            () -> {
              PodRequest target = pod().ns("other-ns-no-match").labels(S2).req();
              PodRequest follower = pod().affinity(term(HOST, S2)).req();
              sim()
                  .run(with(many(10, spreadOverHosts), target, follower))
                  .scheduled(List.of(target))
                  .unschedulable(follower);
            }),
        c(
            "N16",
            T,
            ctx
                + "should filter pod affinity topologies by namespace, matching pods namespace list",
            () -> {
              PodRequest target = pod().ns("other-ns-list").labels(S2).req();
              PodRequest follower =
                  pod().affinity(term(HOST, S2, List.of("other-ns-list"), null)).req();
              Run r = sim().run(with(many(10, spreadOverHosts), target, follower));
              assertThat(r.node(follower)).isSameAs(r.node(target));
            }),
        c(
            "N17",
            T,
            ctx + "should filter pod affinity topologies by namespace, empty namespace selector",
            () -> {
              PodRequest target = pod().ns("empty-ns-selector").labels(S2).req();
              PodRequest follower = pod().affinity(term(HOST, S2, null, new LabelSelector())).req();
              Run r = sim().run(with(many(10, spreadOverHosts), target, follower));
              assertThat(r.node(follower)).isSameAs(r.node(target));
            }));
  }

  /** db ← web ← cache ← ui: each with required hostname affinity to the one before. */
  private static List<PodRequest> dependentChain() {
    List<PodRequest> chain = new ArrayList<>();
    Map<String, String> before = null;
    for (String type : List.of("db", "web", "cache", "ui")) {
      Map<String, String> labels = Map.of("type", type, "spread", "spread");
      PodMaker p = pod().labels(labels);
      chain.add((before == null ? p : p.affinity(term(HOST, before))).req());
      before = labels;
    }
    return chain;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Host ports
  // ---------------------------------------------------------------------------------------------------------------

  @TestFactory
  Stream<DynamicTest> hostPorts() {
    String usage = "HostPortUsage › entry type UT › ";
    return Stream.of(
        c(
            "O01",
            S,
            "Scheduling › In-Flight Nodes › should schedule pods with the same host port to different "
                + "nodes",
            () -> ports(2, new Bind(null, null, 8080), new Bind(null, null, 8080))),
        c(
            "O02",
            HP,
            usage + "identical entries match",
            () -> ports(2, new Bind("10.0.0.0", "TCP", 4443), new Bind("10.0.0.0", "TCP", 4443))),
        c(
            "O03",
            HP,
            usage + "if any one IP has an unspecified IPv4 or IPv6 address, they match (IPv4)",
            () -> ports(2, new Bind("10.0.0.0", "TCP", 4443), new Bind("0.0.0.0", "TCP", 4443))),
        c(
            "O04",
            HP,
            usage + "if any one IP has an unspecified IPv4 or IPv6 address, they match (IPv6)",
            () -> ports(2, new Bind("10.0.0.0", "TCP", 4443), new Bind("::", "TCP", 4443))),
        c(
            "O05",
            HP,
            usage + "mismatched protocols don't match",
            () -> ports(1, new Bind("10.0.0.0", "TCP", 4443), new Bind("10.0.0.0", "SCTP", 4443))),
        c(
            "O06",
            HP,
            usage + "mismatched ports don't match",
            () -> ports(1, new Bind("10.0.0.0", "TCP", 4443), new Bind("10.0.0.0", "TCP", 443))),
        c(
            "O07",
            HP,
            usage
                + "if any one IP has an unspecified IPv4 or IPv6 address, they match — its converse, as "
                + "HostPort.Matches has it: two specified, unequal IPs do not",
            () -> ports(1, new Bind("10.0.0.1", "TCP", 4443), new Bind("10.0.0.2", "TCP", 4443))),
        c(
            "O08",
            ST,
            "HostPort Usage › should hydrate the HostPort usage on a Node update",
            () -> {
              PlannedNode there =
                  existing(
                      fake("roomy", "amd64", "linux", 4, 4 * GI, 110, Map.of()),
                      Map.of(),
                      IntStream.range(0, 10)
                          .mapToObj(i -> pod().hostPort(null, null, i).req())
                          .toArray(PodRequest[]::new));
              PodRequest conflicting = pod().hostPort("0.0.0.0", "TCP", 5).req();
              PodRequest free = pod().hostPort("0.0.0.0", "TCP", 10).req();
              Run r = sim().inFlight(there).run(conflicting, free);
              assertThat(r.existingNodeOf(conflicting)).isNull();
              assertThat(r.existingNodeOf(free)).isSameAs(there);
            }));
  }

  /** A host port a pod's container binds. */
  private record Bind(String ip, String protocol, int port) {}

  /** Two pods binding these host ports need {@code nodes} nodes. */
  private static void ports(int nodes, Bind a, Bind b) {
    List<PodRequest> pods =
        Stream.of(a, b).map(p -> pod().hostPort(p.ip(), p.protocol(), p.port()).req()).toList();
    assertThat(sim().run(pods).scheduled(pods).nodes()).hasSize(nodes);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Instance type selection: the cheapest type that suits pod and pool
  // ---------------------------------------------------------------------------------------------------------------

  @TestFactory
  Stream<DynamicTest> instanceSelection() {
    String ctx = "Instance Type Selection › should schedule on one of the cheapest instances";
    List<InstanceType> assorted = assorted();
    double minPrice = assorted.stream().mapToDouble(InstanceType::price).min().orElseThrow();
    Supplier<Pool> both =
        () -> pool().req(CT, "In", "spot", "on-demand").req(ARCH, "In", "arm64", "amd64");
    return Stream.of(
        cheapest("Q01", ctx, both.get(), pod(), Map.of(), assorted, minPrice),
        cheapest(
            "Q02",
            ctx + " (pod arch = amd64)",
            both.get(),
            pod().require(nr(ARCH, "In", "amd64")),
            Map.of(ARCH, "amd64"),
            assorted,
            minPrice),
        cheapest(
            "Q03",
            ctx + " (pod arch = arm64)",
            both.get(),
            pod().require(nr(ARCH, "In", "arm64")),
            Map.of(ARCH, "arm64"),
            assorted,
            minPrice),
        cheapest(
            "Q04",
            ctx + " (prov arch = amd64)",
            pool().req(ARCH, "In", "amd64"),
            pod(),
            Map.of(ARCH, "amd64"),
            assorted,
            minPrice),
        cheapest(
            "Q05",
            ctx + " (prov arch = arm64)",
            pool().req(ARCH, "In", "arm64"),
            pod(),
            Map.of(ARCH, "arm64"),
            assorted,
            minPrice),
        cheapest(
            "Q06",
            ctx + " (prov os = windows)",
            both.get().req(OS, "In", "windows"),
            pod(),
            Map.of(OS, "windows"),
            assorted,
            minPrice),
        cheapest(
            "Q07",
            ctx + " (pod os = windows)",
            both.get(),
            pod().require(nr(OS, "In", "windows")),
            Map.of(OS, "windows"),
            assorted,
            minPrice),
        cheapest(
            "Q08",
            ctx + " (pod os = linux)",
            both.get(),
            pod().require(nr(OS, "In", "linux")),
            Map.of(OS, "linux"),
            assorted,
            minPrice),
        onePod(
            "Q09",
            IS,
            "Instance Type Selection › should not schedule if no instance type matches selector (pod "
                + "arch = arm)",
            both.get(),
            pod().require(nr(ARCH, "In", "arm64")),
            null,
            assorted.stream().filter(t -> t.labels().get(ARCH).equals("amd64")).toList()),
        c(
            "Q10",
            IS,
            "Instance Type Selection › should schedule on an instance with enough resources",
            () -> {
              // Built so that three such pods always fit one of the types together: they get one
              // node.
              for (String cpu : List.of("0.1", "1.0", "2", "2.5", "4", "8", "16")) {
                for (String mem : List.of("0.1Gi", "1.0Gi", "2Gi", "4Gi", "8Gi", "16Gi", "32Gi")) {
                  Run r =
                      sim()
                          .pools(both.get())
                          .types(assorted)
                          .run(many(3, () -> pod().cpu(cpu).mem(mem)));
                  assertThat(r.nodes()).as("3 × %s cpu, %s", cpu, mem).hasSize(1);
                }
              }
            }),
        onePod(
            "Q11",
            IS,
            "Instance Type Selection › should schedule on cheaper on-demand instance even when spot "
                + "price ordering would place other instance types first",
            pool().req(CT, "In", "on-demand"),
            pod(),
            l -> assertThat(l).containsEntry(IT, "test-instance1"),
            List.of(
                priced(fake("test-instance1", "amd64", 1, GI), 1.0),
                priced(fake("test-instance2", "amd64", 1, GI), 1.3))));
  }

  private static DynamicTest cheapest(
      String code,
      String title,
      Pool pool,
      PodMaker pod,
      Map<String, String> labels,
      List<InstanceType> types,
      double minPrice) {
    return c(
        code,
        IS,
        title,
        () -> {
          PodRequest p = pod.req();
          PlannedNode node = sim().pools(pool).types(types).run(p).node(p);
          assertThat(node.type().price()).isEqualTo(minPrice);
          assertThat(node.labels()).containsAllEntriesOf(labels);
        });
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The fake cloud provider's instance types
  // ---------------------------------------------------------------------------------------------------------------

  private static InstanceType fake(String name, String arch, double cpus, long memory) {
    return fake(name, arch, "linux", cpus, memory, 5, Map.of());
  }

  /**
   * As {@code fake.NewInstanceType}: its labels, its capacity (pods included), its price from its
   * resources.
   */
  private static InstanceType fake(
      String name,
      String arch,
      String os,
      double cpus,
      long memory,
      long pods,
      Map<String, Long> extended) {
    Map<String, String> labels =
        new HashMap<>(
            Map.of(
                IT,
                name,
                ARCH,
                arch,
                OS,
                os,
                CT,
                "on-demand",
                INTEGER,
                String.valueOf((long) Math.ceil(cpus))));
    boolean large = cpus > 4 && memory > 8 * GI;
    labels.put(SIZE, large ? "large" : "small");
    if (large) {
      labels.put(SPECIAL, "optional");
    }
    double price =
        0.1 * cpus
            + 0.1 * memory / 1e9
            + extended.keySet().stream()
                .filter(r -> r.equals(VENDOR_A) || r.equals(VENDOR_B))
                .count();
    Resources capacity =
        new Resources(Math.round(cpus * 1000), memory, extended).with("pods", pods);
    return new InstanceType(name, labels, capacity, price, 0);
  }

  private static InstanceType priced(InstanceType type, double price) {
    return new InstanceType(type.name(), type.labels(), type.allocatable(), price, type.warm());
  }

  /** {@code fake.InstanceTypes(n)}: fake-it-i with i+1 cpus, 2(i+1)Gi and 10(i+1) pods. */
  private static List<InstanceType> fakeInstanceTypes(int n) {
    return IntStream.range(0, n).mapToObj(i -> fakeIt(i, Map.of())).toList();
  }

  private static InstanceType fakeIt(int i, Map<String, Long> extended) {
    return fake(
        "fake-it-" + i, "amd64", "linux", i + 1, 2L * (i + 1) * GI, 10L * (i + 1), extended);
  }

  /** {@code fake.InstanceTypes(5)} with 25 of one GPU on the first, 25 of another on the second. */
  private static List<InstanceType> fakeGpus() {
    List<InstanceType> types = new ArrayList<>(fakeInstanceTypes(5));
    types.set(0, fakeIt(0, Map.of("karpenter.sh/super-great-gpu", 25L)));
    types.set(1, fakeIt(1, Map.of("karpenter.sh/even-better-gpu", 25L)));
    return types;
  }

  /**
   * {@code fake.InstanceTypesAssorted()} without its zones and capacity types (one offering,
   * on-demand, each).
   */
  private static List<InstanceType> assorted() {
    List<InstanceType> types = new ArrayList<>();
    for (int cpu : new int[] {1, 2, 4, 8, 16, 32, 64}) {
      for (int mem : new int[] {1, 2, 4, 8, 16, 32, 64, 128}) {
        for (String os : List.of("linux", "windows")) {
          for (String arch : List.of("amd64", "arm64")) {
            String name = cpu + "-cpu-" + mem + "-mem-" + arch + "-" + os;
            types.add(fake(name, arch, os, cpu, mem * GI, 5, Map.of()));
          }
        }
      }
    }
    return types;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Cases, pods, pools, nodes
  // ---------------------------------------------------------------------------------------------------------------

  private static DynamicTest c(String code, String file, String title, Executable body) {
    return DynamicTest.dynamicTest(code + " " + file + " › " + title, body);
  }

  /**
   * One pod against the pool: {@code onNode} checks its node's labels; null: it gets no node, none
   * is launched.
   */
  private static DynamicTest onePod(
      String code,
      String file,
      String title,
      Pool pool,
      PodMaker pod,
      Consumer<Map<String, String>> onNode) {
    return onePod(code, file, title, pool, pod, onNode, DEFAULT_TYPES);
  }

  private static DynamicTest onePod(
      String code,
      String file,
      String title,
      Pool pool,
      PodMaker pod,
      Consumer<Map<String, String>> onNode,
      List<InstanceType> types) {
    return onePod(code, file, title, pool, pod, onNode, types, null);
  }

  /** As above, with a DaemonSet whose pod every node runs. */
  private static DynamicTest onePod(
      String code,
      String file,
      String title,
      Pool pool,
      PodMaker pod,
      Consumer<Map<String, String>> onNode,
      PodMaker daemonSet) {
    return onePod(code, file, title, pool, pod, onNode, DEFAULT_TYPES, daemonSet);
  }

  private static DynamicTest onePod(
      String code,
      String file,
      String title,
      Pool pool,
      PodMaker pod,
      Consumer<Map<String, String>> onNode,
      List<InstanceType> types,
      PodMaker daemonSet) {
    return c(
        code,
        file,
        title,
        () -> {
          PodRequest p = pod.req();
          Sim sim = sim().pools(pool).types(types);
          Run r = (daemonSet == null ? sim : sim.daemonSet(daemonSet)).run(p);
          if (onNode == null) {
            r.unschedulable(p).nothingLaunched();
          } else {
            onNode.accept(r.labels(p));
          }
        });
  }

  private static final AtomicInteger SEQUENCE = new AtomicInteger();

  private static PodMaker pod() {
    return new PodMaker("pod-" + SEQUENCE.incrementAndGet());
  }

  private static List<PodRequest> many(int n, Supplier<PodMaker> pod) {
    return IntStream.range(0, n).mapToObj(i -> pod.get().req()).toList();
  }

  private static List<PodRequest> with(List<PodRequest> pods, PodRequest... more) {
    List<PodRequest> all = new ArrayList<>(pods);
    all.addAll(List.of(more));
    return all;
  }

  private static NodeSelectorRequirement nr(String key, String operator, String... values) {
    return new NodeSelectorRequirementBuilder()
        .withKey(key)
        .withOperator(operator)
        .withValues(values)
        .build();
  }

  private static LabelSelector selector(Map<String, String> matchLabels) {
    return matchLabels == null
        ? null
        : new LabelSelectorBuilder().withMatchLabels(matchLabels).build();
  }

  private static io.fabric8.kubernetes.api.model.PodAffinityTerm term(
      String key, Map<String, String> labels) {
    return term(key, labels, null, null);
  }

  private static io.fabric8.kubernetes.api.model.PodAffinityTerm term(
      String key,
      Map<String, String> labels,
      List<String> namespaces,
      LabelSelector namespaceSelector) {
    return new PodAffinityTermBuilder()
        .withTopologyKey(key)
        .withLabelSelector(selector(labels))
        .withNamespaces(namespaces)
        .withNamespaceSelector(namespaceSelector)
        .build();
  }

  private static TopologySpreadConstraint spread(
      String key,
      int maxSkew,
      String whenUnsatisfiable,
      Map<String, String> labels,
      String... matchLabelKeys) {
    return new TopologySpreadConstraintBuilder()
        .withTopologyKey(key)
        .withMaxSkew(maxSkew)
        .withWhenUnsatisfiable(whenUnsatisfiable)
        .withLabelSelector(selector(labels))
        .withMatchLabelKeys(matchLabelKeys.length == 0 ? null : List.of(matchLabelKeys))
        .build();
  }

  /**
   * A pod as upstream's {@code test.PodOptions} describe one, built with fabric8's {@link
   * PodBuilder}.
   */
  private static final class PodMaker {
    private final String name;
    private String namespace = "default";
    private final Map<String, String> labels = new HashMap<>();
    private final Map<String, Quantity> requests = new HashMap<>();
    private final Map<String, String> nodeSelector = new HashMap<>();
    private final List<NodeSelectorTerm> required = new ArrayList<>();
    private final List<PreferredSchedulingTerm> preferred = new ArrayList<>();
    private final List<Toleration> tolerations = new ArrayList<>();
    private final List<ContainerPort> ports = new ArrayList<>();
    private final List<Container> initContainers = new ArrayList<>();
    private final Map<String, Quantity> overhead = new HashMap<>();
    private final List<TopologySpreadConstraint> spread = new ArrayList<>();
    private PodAffinity podAffinity;
    private PodAntiAffinity podAntiAffinity;

    PodMaker(String name) {
      this.name = name;
    }

    PodMaker ns(String ns) {
      namespace = ns;
      return this;
    }

    PodMaker label(String key, String value) {
      labels.put(key, value);
      return this;
    }

    PodMaker labels(Map<String, String> more) {
      labels.putAll(more);
      return this;
    }

    PodMaker cpu(String quantity) {
      return request("cpu", quantity);
    }

    PodMaker mem(String quantity) {
      return request("memory", quantity);
    }

    PodMaker request(String resource, String quantity) {
      requests.put(resource, new Quantity(quantity));
      return this;
    }

    PodMaker overhead(String cpu) {
      overhead.put("cpu", new Quantity(cpu));
      return this;
    }

    PodMaker init(boolean sidecar, String cpu, String memory) {
      initContainers.add(
          new ContainerBuilder()
              .withName("init-" + initContainers.size())
              .withRestartPolicy(sidecar ? "Always" : null)
              .withNewResources()
              .withRequests(Map.of("cpu", new Quantity(cpu), "memory", new Quantity(memory)))
              .endResources()
              .build());
      return this;
    }

    PodMaker select(String key, String value) {
      nodeSelector.put(key, value);
      return this;
    }

    /** A required node affinity term (terms are ORed, the requirements of one ANDed). */
    PodMaker require(NodeSelectorRequirement... term) {
      required.add(new NodeSelectorTermBuilder().withMatchExpressions(term).build());
      return this;
    }

    PodMaker prefer(int weight, NodeSelectorRequirement... term) {
      preferred.add(
          new PreferredSchedulingTermBuilder()
              .withWeight(weight)
              .withNewPreference()
              .withMatchExpressions(term)
              .endPreference()
              .build());
      return this;
    }

    PodMaker tolerate(String key, String operator, String value, String effect) {
      tolerations.add(
          new TolerationBuilder()
              .withKey(key)
              .withOperator(operator)
              .withValue(value)
              .withEffect(effect)
              .build());
      return this;
    }

    PodMaker hostPort(String ip, String protocol, int port) {
      ports.add(
          new ContainerPortBuilder()
              .withContainerPort(port)
              .withHostPort(port)
              .withHostIP(ip)
              .withProtocol(protocol)
              .build());
      return this;
    }

    PodMaker affinity(io.fabric8.kubernetes.api.model.PodAffinityTerm term) {
      podAffinity().getRequiredDuringSchedulingIgnoredDuringExecution().add(term);
      return this;
    }

    PodMaker preferAffinity(int weight, io.fabric8.kubernetes.api.model.PodAffinityTerm term) {
      podAffinity()
          .getPreferredDuringSchedulingIgnoredDuringExecution()
          .add(
              new WeightedPodAffinityTermBuilder()
                  .withWeight(weight)
                  .withPodAffinityTerm(term)
                  .build());
      return this;
    }

    PodMaker antiAffinity(io.fabric8.kubernetes.api.model.PodAffinityTerm term) {
      podAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution().add(term);
      return this;
    }

    PodMaker preferAntiAffinity(int weight, io.fabric8.kubernetes.api.model.PodAffinityTerm term) {
      podAntiAffinity()
          .getPreferredDuringSchedulingIgnoredDuringExecution()
          .add(
              new WeightedPodAffinityTermBuilder()
                  .withWeight(weight)
                  .withPodAffinityTerm(term)
                  .build());
      return this;
    }

    PodMaker emptyPodAffinity() {
      podAffinity();
      podAntiAffinity();
      return this;
    }

    PodMaker spread(TopologySpreadConstraint constraint) {
      spread.add(constraint);
      return this;
    }

    private PodAffinity podAffinity() {
      if (podAffinity == null) {
        podAffinity = new PodAffinity(new ArrayList<>(), new ArrayList<>());
      }
      return podAffinity;
    }

    private PodAntiAffinity podAntiAffinity() {
      if (podAntiAffinity == null) {
        podAntiAffinity = new PodAntiAffinity(new ArrayList<>(), new ArrayList<>());
      }
      return podAntiAffinity;
    }

    Pod build() {
      Affinity affinity = null;
      if (!required.isEmpty()
          || !preferred.isEmpty()
          || podAffinity != null
          || podAntiAffinity != null) {
        affinity = new Affinity();
        if (!required.isEmpty() || !preferred.isEmpty()) {
          NodeAffinity node = new NodeAffinity();
          node.setRequiredDuringSchedulingIgnoredDuringExecution(
              required.isEmpty() ? null : new NodeSelector(required));
          node.setPreferredDuringSchedulingIgnoredDuringExecution(preferred);
          affinity.setNodeAffinity(node);
        }
        affinity.setPodAffinity(podAffinity);
        affinity.setPodAntiAffinity(podAntiAffinity);
      }
      return new PodBuilder()
          .withNewMetadata()
          .withName(name)
          .withNamespace(namespace)
          .withLabels(labels)
          .endMetadata()
          .withNewSpec()
          .addNewContainer()
          .withName("main")
          .withNewResources()
          .withRequests(requests)
          .endResources()
          .withPorts(ports)
          .endContainer()
          .withInitContainers(initContainers)
          .withNodeSelector(nodeSelector)
          .withAffinity(affinity)
          .withTolerations(tolerations)
          .withOverhead(overhead.isEmpty() ? null : overhead)
          .withTopologySpreadConstraints(spread)
          .endSpec()
          .build();
    }

    PodRequest req() {
      return PodRequests.of(build());
    }
  }

  private static Pool pool() {
    return pool("default");
  }

  private static Pool pool(String name) {
    return new Pool(name);
  }

  private static Resources cpuLeft(long milli) {
    return new Resources(milli, UNLIMITED, Map.of());
  }

  /** A NodePool (Karpenter's resource) and, as the controller sees it, its view. */
  private static final class Pool {
    private final NodePool pool = new NodePool();
    private int weight;
    private Resources remaining;

    Pool(String name) {
      pool.getMetadata().setName(name);
    }

    Pool req(String key, String operator, String... values) {
      pool.getSpec()
          .template
          .spec
          .requirements
          .add(new Requirement(key, operator, List.of(values)));
      return this;
    }

    Pool label(String key, String value) {
      if (pool.getSpec().template.metadata.labels == null) {
        pool.getSpec().template.metadata.labels = new HashMap<>();
      }
      pool.getSpec().template.metadata.labels.put(key, value);
      return this;
    }

    Pool taint(String key, String value, String effect) {
      pool.getSpec()
          .template
          .spec
          .taints
          .add(new TaintBuilder().withKey(key).withValue(value).withEffect(effect).build());
      return this;
    }

    Pool weight(int w) {
      weight = w;
      return this;
    }

    /** What its limits still allow. */
    Pool remaining(Resources left) {
      remaining = left;
      return this;
    }

    NodePoolView view() {
      return view(List.of());
    }

    NodePoolView view(List<PodRequest> daemons) {
      var template = pool.getSpec().template.spec;
      return new NodePoolView(
          pool.getMetadata().getName(),
          weight,
          InstanceTypes.poolLabels(pool),
          List.copyOf(template.requirements),
          List.copyOf(template.taints),
          remaining,
          List.copyOf(daemons));
    }
  }

  private static final AtomicInteger HOSTS = new AtomicInteger();

  /**
   * A node of the default pool there or on its way, with its labels (zone, ...) and the pods it
   * runs.
   */
  private static PlannedNode existing(
      InstanceType type, Map<String, String> labels, PodRequest... pods) {
    return existing(pool().view(), type, labels, pods);
  }

  private static PlannedNode existing(
      NodePoolView pool, InstanceType type, Map<String, String> labels, PodRequest... pods) {
    Map<String, String> all = new HashMap<>(Scheduler.labels(pool, type));
    all.put(HOST, "existing-" + HOSTS.incrementAndGet());
    all.putAll(labels);
    Resources used =
        Arrays.stream(pods).map(PodRequest::requests).reduce(Resources.NONE, Resources::plus);
    return new PlannedNode(
        pool, type, List.of(pods), type.allocatable().minus(KUBE_RESERVED).minus(used), all);
  }

  /** The node with no room left. */
  private static PlannedNode full(PlannedNode node) {
    return new PlannedNode(node.pool(), node.type(), node.pods(), Resources.NONE, node.labels());
  }

  private static Sim sim() {
    return new Sim();
  }

  /**
   * A scheduling round: the pools and their DaemonSets, the types, the nodes there or on their way.
   */
  private static final class Sim {
    private List<Pool> pools = List.of(pool());
    private final List<PodRequest> daemons = new ArrayList<>();
    private List<InstanceType> types = DEFAULT_TYPES;
    private List<PlannedNode> inFlight = List.of();

    Sim pools(Pool... all) {
      pools = List.of(all);
      return this;
    }

    Sim types(List<InstanceType> all) {
      types = all;
      return this;
    }

    Sim inFlight(PlannedNode... nodes) {
      inFlight = List.of(nodes);
      return this;
    }

    /** A DaemonSet of every pool (its pod lands on the pools' nodes it tolerates and selects). */
    Sim daemonSet(PodMaker pod) {
      daemons.add(pod.req());
      return this;
    }

    Run run(PodRequest... pods) {
      return run(List.of(pods));
    }

    Run run(List<PodRequest> pods) {
      List<NodePoolView> views = pools.stream().map(p -> p.view(daemons)).toList();
      return new Run(new Scheduler(KUBE_RESERVED).schedule(pods, views, types, inFlight), inFlight);
    }
  }

  /** A round's plan, asked as upstream's tests ask the cluster after provisioning. */
  private static final class Run {
    final Scheduler.Plan plan;
    final List<PlannedNode> inFlight;

    Run(Scheduler.Plan plan, List<PlannedNode> inFlight) {
      this.plan = plan;
      this.inFlight = inFlight;
    }

    List<PlannedNode> nodes() {
      return plan.nodes();
    }

    boolean isScheduled(PodRequest pod) {
      return plan.onExisting().containsKey(pod)
          || plan.nodes().stream().anyMatch(n -> n.pods().contains(pod));
    }

    /** The node the pod goes to: a new one or one there. */
    PlannedNode node(PodRequest pod) {
      PlannedNode there = existingNodeOf(pod);
      return there != null
          ? there
          : plan.nodes().stream()
              .filter(n -> n.pods().contains(pod))
              .findFirst()
              .orElseThrow(
                  () ->
                      new AssertionError(
                          pod.name()
                              + " got no node; unschedulable: "
                              + plan.unschedulable().stream().map(PodRequest::name).toList()));
    }

    PlannedNode existingNodeOf(PodRequest pod) {
      return plan.onExisting().get(pod);
    }

    Map<String, String> labels(PodRequest pod) {
      return node(pod).labels();
    }

    String type(PodRequest pod) {
      return node(pod).type().name();
    }

    Run scheduled(Collection<PodRequest> pods) {
      pods.forEach(this::node);
      return this;
    }

    Run unschedulable(PodRequest... pods) {
      return unschedulable(List.of(pods));
    }

    Run unschedulable(Collection<PodRequest> pods) {
      assertThat(plan.unschedulable()).containsAll(pods);
      assertThat(pods).noneMatch(this::isScheduled);
      return this;
    }

    void nothingLaunched() {
      assertThat(plan.nodes()).isEmpty();
    }

    /**
     * How many of the pods {@code counted} selects each new node holds (nodes holding none left
     * out), sorted.
     */
    List<Integer> counts(Predicate<PodRequest> counted) {
      return plan.nodes().stream()
          .map(n -> (int) n.pods().stream().filter(counted).count())
          .filter(c -> c > 0)
          .sorted()
          .toList();
    }

    /**
     * How many of the pods {@code counted} selects each domain of {@code key} holds, new nodes and
     * those there.
     */
    Map<String, Integer> byDomain(String key, Predicate<PodRequest> counted) {
      Map<String, Integer> counts = new HashMap<>();
      List<PlannedNode> all = new ArrayList<>(plan.nodes());
      all.addAll(inFlight);
      for (PlannedNode node : all) {
        List<PodRequest> pods = new ArrayList<>(node.pods());
        plan.onExisting()
            .forEach(
                (pod, there) -> {
                  if (there == node) {
                    pods.add(pod);
                  }
                });
        String domain = node.labels().get(key);
        int n = (int) pods.stream().filter(counted).count();
        if (domain != null && n > 0) {
          counts.merge(domain, n, Integer::sum);
        }
      }
      return counts;
    }
  }
}
