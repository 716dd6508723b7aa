package io.warmmetal.controller.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.claims.NodeClaims;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.events.WrittenEvents;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeClassReference;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.testing.MapStore;
import io.warmmetal.controller.testing.MovingClock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Upstream's NodeClaim consistency suite ({@code pkg/controllers/nodeclaim/consistency}): the node
 * shape check over a claim that asks for 8 CPU, 64Gi and 5 pods of a machine its launch said has
 * 16, 128Gi and 10. Not ported: "should ignore NodeClaims which aren't managed by this instance of
 * Karpenter" — the lifecycle only ever looks at NodeClaims of WarmMetal's NodePools.
 */
@EnableKubernetesMockClient(crud = true)
class ConsistencyTest {
  KubernetesClient kube;
  private final MovingClock clock = new MovingClock(Instant.parse("2026-12-02T12:00:00Z"));
  private Recorder recorder;
  private Consistency consistency;

  @BeforeEach
  void start() {
    recorder = new Recorder(kube);
    consistency =
        new Consistency(
            new NodeClaimWriter(kube, new NodeClaims(new MapStore<>(), clock)), recorder, clock);
  }

  @AfterEach
  void stop() {
    recorder.close();
  }

  private NodeClaim initializedClaim() {
    NodeClaim claim = new NodeClaim();
    claim.getMetadata().setName("default-abcde");
    claim.getSpec().nodeClassRef = new NodeClassReference();
    claim.getSpec().nodeClassRef.kind = WarmMetalNodeClass.KIND;
    claim.getSpec().nodeClassRef.name = "default";
    claim.getSpec().resources.requests =
        Map.of("cpu", new Quantity("8"), "memory", new Quantity("64Gi"), "pods", new Quantity("5"));
    claim.setStatus(new NodeClaim.Status());
    claim.getStatus().providerID = "warmmetal://m-1";
    claim.getStatus().capacity =
        Map.of(
            "cpu", new Quantity("16"), "memory", new Quantity("128Gi"), "pods", new Quantity("10"));
    Conditions.set(claim.getStatus().conditions, Conditions.INITIALIZED, true, "Initialized", "");
    return kube.resources(NodeClaim.class).resource(claim).create();
  }

  private static Node nodeWith(String memory) {
    return new NodeBuilder()
        .withNewMetadata()
        .withName("wm-1")
        .endMetadata()
        .withNewStatus()
        .withCapacity(
            Map.of(
                "cpu",
                new Quantity("16"),
                "memory",
                new Quantity(memory),
                "pods",
                new Quantity("10")))
        .endStatus()
        .build();
  }

  private String condition() {
    NodeClaim now = kube.resources(NodeClaim.class).withName("default-abcde").get();
    return Conditions.get(now.getStatus().conditions, Conditions.CONSISTENT_STATE_FOUND)
        .getStatus();
  }

  @Test
  @DisplayName(
      "NodeClaimController Node Shape should set consistent state found condition to true if there"
          + " are no consistency issues")
  void aNodeWithWhatItsLaunchPromisedIsConsistent() {
    NodeClaim claim = initializedClaim();
    assertThat(consistency.check(claim, nodeWith("128Gi"))).isEqualTo(Consistency.SCAN_PERIOD);
    assertThat(condition()).isEqualTo("True");
  }

  @Test
  @DisplayName(
      "NodeClaimController Node Shape should detect issues that launch with much fewer resources"
          + " than expected")
  void aNodeWithHalfTheMemoryExpectedIsNot() throws Exception {
    NodeClaim claim = initializedClaim();
    consistency.check(claim, nodeWith("64Gi"));
    assertThat(WrittenEvents.in(kube, recorder, "default"))
        .anySatisfy(
            e -> {
              assertThat(e.getReason()).isEqualTo("FailedConsistencyCheck");
              assertThat(e.getType()).isEqualTo("Warning");
              assertThat(e.getMessage())
                  .isEqualTo(
                      "expected 128Gi of resource memory, but found 64Gi (50.0% of expected)");
            });
    assertThat(condition()).isEqualTo("False");
  }

  @Test
  void aClaimIsLookedAtOnceEveryTenMinutesHoweverOftenItIsWoken() {
    NodeClaim claim = initializedClaim();
    consistency.check(claim, nodeWith("128Gi"));
    clock.advance(Duration.ofMinutes(4));
    assertThat(consistency.check(claim, nodeWith("64Gi")))
        .as("not looked at again yet: when to")
        .isEqualTo(Duration.ofMinutes(6));
    assertThat(condition()).isEqualTo("True");
    clock.advance(Duration.ofMinutes(6));
    consistency.check(claim, nodeWith("64Gi"));
    assertThat(condition()).isEqualTo("False");
  }

  @Test
  void withinTenPercentOfWhatWasExpectedIsEnough() {
    NodeClaim claim = initializedClaim();
    assertThat(Consistency.nodeShape(claim, nodeWith("116Gi"))).isEmpty(); // 90.6 %
    assertThat(Consistency.nodeShape(claim, nodeWith("115Gi"))).hasSize(1); // 89.8 %
  }
}
