package io.warmmetal.controller.disruption;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.Hashes;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.WellKnown;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Whole disruption passes on fabric8's mock API server (the shipped NodeClaim CRD, so status is a
 * subresource), over a fixed capacity and a clock the test moves: expiry, pod events and emptiness
 * across consolidateAfter, do-not-disrupt, and a drifted node replaced before it is deleted.
 */
@EnableKubernetesMockClient(crud = true)
class DisruptionPassTest {
  KubernetesClient kube;
  private final TestCluster cluster = new TestCluster();
  private ApiServerPasses passes;

  @BeforeEach
  void start() throws Exception {
    passes = new ApiServerPasses(kube, cluster);
  }

  @AfterEach
  void stop() {
    passes.close();
  }

  private void create() {
    passes.create();
  }

  private NodeClaim claim(String name) {
    return passes.claim(name);
  }

  private void pass(Instant at) throws Exception {
    passes.pass(at);
  }

  @Test
  void anExpiredNodeGoesAtOnceAnEmptyOneOnceQuietForConsolidateAfterOneWithADoNotDisruptPodNever()
      throws Exception {
    cluster.pool.getSpec().disruption.consolidationPolicy = "WhenEmpty";
    cluster.budget("100%");
    cluster.node("empty", cluster.small).getStatus().lastPodEventTime = null;
    cluster.node("kept", cluster.small).getStatus().lastPodEventTime = null;
    Pod batch = cluster.pod("batch", "kept", 500);
    batch.getMetadata().setAnnotations(Map.of(WellKnown.DO_NOT_DISRUPT_ANNOTATION, "true"));
    cluster.node("expiring", cluster.small).getSpec().expireAfter = "1h";
    create();
    Instant born = Instant.parse(claim("expiring").getMetadata().getCreationTimestamp());

    Instant first = born.plus(Duration.ofMinutes(61));
    pass(first);
    assertThat(claim("expiring")).isNull(); // forcefully: not waiting for anything
    assertThat(claim("empty").getStatus().lastPodEventTime).isEqualTo(first.toString());
    assertThat(claim("kept").getStatus().lastPodEventTime).isEqualTo(first.toString());

    pass(first.plusSeconds(29)); // consolidateAfter is 30 s
    assertThat(claim("empty")).isNotNull();

    pass(first.plusSeconds(31));
    assertThat(claim("empty")).isNull();
    assertThat(claim("kept")).isNotNull();
    assertThat(passes.metrics.scrape())
        .containsPattern(
            "karpenter_voluntary_disruption_decisions_total\\{consolidation_type=\"empty\","
                + "decision=\"delete\",reason=\"empty\",?} 1.0");

    pass(first.plus(Duration.ofDays(1)));
    assertThat(claim("kept")).isNotNull();
  }

  @Test
  void aDriftedNodeIsReplacedFirstAndDeletedOnceItsReplacementIsInitialized() throws Exception {
    NodeClaim old = cluster.node("old", cluster.large);
    Map<String, String> stale = new HashMap<>();
    stale.put(Hashes.NODEPOOL_HASH_ANNOTATION, "stale");
    stale.put(Hashes.NODEPOOL_HASH_VERSION_ANNOTATION, Hashes.NODEPOOL_HASH_VERSION);
    old.getMetadata().setAnnotations(stale);
    cluster.pod("web", "old", 5000); // fits on no other node: there is none
    create();
    Instant now = Instant.parse(claim("old").getMetadata().getCreationTimestamp());

    pass(now);
    assertThat(Conditions.get(claim("old").getStatus().conditions, Conditions.DRIFTED).getReason())
        .isEqualTo("NodePoolDrifted");
    assertThat(cluster.launched).hasSize(1);
    assertThat(claim("old").getMetadata().getAnnotations())
        .containsEntry(Commands.REPLACED_BY, "replacement-1-0")
        .containsEntry(Commands.REASON, "Drifted");
    assertThat(kube.nodes().withName("old").get().getSpec().getTaints())
        .anySatisfy(t -> assertThat(t.getKey()).isEqualTo(WellKnown.DISRUPTED_TAINT));

    // The replacement the capacity launched, on its way.
    NodeClaim replacement = new NodeClaim();
    replacement.getMetadata().setName("replacement-1-0");
    replacement.getSpec().nodeClassRef = cluster.pool.getSpec().template.spec.nodeClassRef;
    replacement
        .getMetadata()
        .setLabels(
            Map.of(WellKnown.NODEPOOL_LABEL, "default", WellKnown.INSTANCE_TYPE_LABEL, "large"));
    kube.resources(NodeClaim.class).resource(replacement).create();
    pass(now.plusSeconds(5));
    assertThat(claim("old")).isNotNull(); // waits for it
    assertThat(cluster.launched).hasSize(1); // and launches no other

    NodeClaim up = claim("replacement-1-0");
    up.setStatus(new NodeClaim.Status());
    up.getStatus().nodeName = "replacement";
    Conditions.set(up.getStatus().conditions, Conditions.INITIALIZED, true, "Initialized", "");
    kube.resources(NodeClaim.class).resource(up).updateStatus();
    pass(now.plusSeconds(10));
    assertThat(claim("old")).isNull();
    assertThat(passes.metrics.scrape())
        .containsPattern(
            "karpenter_voluntary_disruption_decisions_total\\{consolidation_type=\"\","
                + "decision=\"replace\",reason=\"drifted\",?} 1.0");
  }
}
