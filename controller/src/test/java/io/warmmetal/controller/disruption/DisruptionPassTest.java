package io.warmmetal.controller.disruption;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.cache.Store;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.claims.NodeClaims;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.Hashes;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.state.Definitions;
import io.warmmetal.controller.testing.MovingClock;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
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
  private final MovingClock clock = new MovingClock(TestCluster.T0);
  private final KarpenterMetrics metrics = new KarpenterMetrics();
  private Recorder events;
  private Disruption disruption;

  /** The NodePools as an informer's cache would hold them: the cluster's one. */
  private final class Pools implements Store<NodePool> {
    @Override
    public List<NodePool> list() {
      return List.of(cluster.pool);
    }

    @Override
    public List<String> listKeys() {
      return List.of("default");
    }

    @Override
    public NodePool get(NodePool pool) {
      return getByKey(pool.getMetadata().getName());
    }

    @Override
    public NodePool getByKey(String key) {
      return "default".equals(key) ? cluster.pool : null;
    }

    @Override
    public String getKey(NodePool pool) {
      return pool.getMetadata().getName();
    }
  }

  /** No node class: drift by node class is not what these passes are about. */
  private static final class NoNodeClasses implements Store<WarmMetalNodeClass> {
    @Override
    public List<WarmMetalNodeClass> list() {
      return List.of();
    }

    @Override
    public List<String> listKeys() {
      return List.of();
    }

    @Override
    public WarmMetalNodeClass get(WarmMetalNodeClass nodeClass) {
      return null;
    }

    @Override
    public WarmMetalNodeClass getByKey(String key) {
      return null;
    }

    @Override
    public String getKey(WarmMetalNodeClass nodeClass) {
      return nodeClass.getMetadata().getName();
    }
  }

  @BeforeEach
  void start() throws Exception {
    try (InputStream in =
        Files.newInputStream(Path.of("..", "deploy", "crds", "karpenter.sh_nodeclaims.yaml"))) {
      kube.apiextensions()
          .v1()
          .customResourceDefinitions()
          .resource(Serialization.unmarshal(in, CustomResourceDefinition.class))
          .create();
    }
    events = new Recorder(kube);
    disruption =
        new Disruption(
            kube,
            new NodeClaimWriter(
                kube,
                new NodeClaims(
                    kube.resources(NodeClaim.class).runnableInformer(0).getStore(), clock)),
            new Definitions(new Pools(), new NoNodeClasses()),
            cluster.scheduler,
            cluster.capacity(),
            events,
            metrics,
            clock,
            Runnable::run);
  }

  @AfterEach
  void stop() {
    events.close();
  }

  /** Writes what the cluster holds now to the API server. */
  private void create() {
    cluster.claims.forEach(
        c -> {
          NodeClaim created = kube.resources(NodeClaim.class).resource(c).create();
          created.setStatus(c.getStatus());
          kube.resources(NodeClaim.class).resource(created).updateStatus();
        });
    cluster.nodes.forEach(n -> kube.nodes().resource(n).create());
    cluster.pods.forEach(p -> kube.pods().resource(p).create());
  }

  private NodeClaim claim(String name) {
    return kube.resources(NodeClaim.class).withName(name).get();
  }

  /** One pass, over what the API server holds now, at {@code at}. */
  private void pass(Instant at) throws Exception {
    clock.set(at);
    List<Pod> pods = kube.pods().inAnyNamespace().list().getItems();
    List<Node> nodes = kube.nodes().list().getItems();
    List<NodeClaim> claims = kube.resources(NodeClaim.class).list().getItems();
    disruption.reconcile(pods, nodes, claims, List.of());
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
    assertThat(metrics.scrape())
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
    assertThat(metrics.scrape())
        .containsPattern(
            "karpenter_voluntary_disruption_decisions_total\\{consolidation_type=\"\","
                + "decision=\"replace\",reason=\"drifted\",?} 1.0");
  }
}
