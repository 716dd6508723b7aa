package io.warmmetal.controller.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.claims.NodeClaims;
import io.warmmetal.controller.cloudprovider.FakeCloudProvider;
import io.warmmetal.controller.cloudprovider.RepairPolicy;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.events.WrittenEvents;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeClassReference;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.testing.MapStore;
import io.warmmetal.controller.testing.MovingClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Upstream's node health suite ({@code pkg/controllers/node/health/suite_test.go}), one test per
 * {@code It}, named after it: {@link NodeHealth#check} stands for upstream's reconcile of the Node,
 * the fake cloud provider's policy is upstream's fake's ({@code BadNode} False for 30 minutes), and
 * the clock is the test's.
 */
@EnableKubernetesMockClient(crud = true)
class NodeHealthTest {
  private static final Instant T0 = Instant.parse("2026-12-02T12:00:00Z");
  private static final Duration HOUR = Duration.ofMinutes(60);

  KubernetesClient kube;
  private final FakeCloudProvider cloud = new FakeCloudProvider();
  private final MovingClock clock = new MovingClock(T0);
  private final KarpenterMetrics metrics = new KarpenterMetrics();
  private Recorder recorder;
  private NodeHealth health;
  private final NodePool nodePool = new NodePool();
  private int created;

  @BeforeEach
  void start() {
    recorder = new Recorder(kube);
    health =
        new NodeHealth(
            cloud,
            new NodeClaimWriter(kube, new NodeClaims(new MapStore<>(), clock)),
            () -> kube.nodes().list().getItems(),
            name -> kube.resources(NodePool.class).withName(name).get(),
            recorder,
            metrics,
            clock);
    nodePool.getMetadata().setName("default");
    nodePool.getSpec().template.spec.nodeClassRef = new NodeClassReference();
    nodePool.getSpec().template.spec.nodeClassRef.kind = WarmMetalNodeClass.KIND;
    nodePool.getSpec().template.spec.nodeClassRef.name = "default";
  }

  @AfterEach
  void stop() {
    recorder.close();
  }

  /** A NodeClaim (with the termination finalizer) and its Node, not applied yet. */
  private record Pair(NodeClaim claim, Node node) {
    /** Labels both with the NodePool. */
    Pair inPool(String pool) {
      claim.getMetadata().getLabels().put(WellKnown.NODEPOOL_LABEL, pool);
      node.getMetadata().getLabels().put(WellKnown.NODEPOOL_LABEL, pool);
      return this;
    }

    /** Gives the Node a condition that changed at {@code at}. */
    Pair condition(String type, String status, Instant at) {
      node.getStatus()
          .getConditions()
          .add(
              new NodeConditionBuilder()
                  .withType(type)
                  .withStatus(status)
                  .withLastTransitionTime(at.toString())
                  .build());
      return this;
    }

    Pair unhealthy(Instant since) {
      return condition("BadNode", "False", since);
    }
  }

  private Pair nodeClaimAndNode() {
    String name = "default-" + created++;
    NodeClaim claim = new NodeClaim();
    claim.getMetadata().setName(name);
    claim.getMetadata().setFinalizers(new ArrayList<>(List.of(WellKnown.TERMINATION_FINALIZER)));
    claim.getMetadata().setLabels(new HashMap<>());
    claim.getSpec().nodeClassRef = new NodeClassReference();
    claim.getSpec().nodeClassRef.kind = WarmMetalNodeClass.KIND;
    claim.getSpec().nodeClassRef.name = "default";
    claim.setStatus(new NodeClaim.Status());
    claim.getStatus().providerID = "warmmetal://m-" + name;
    claim.getStatus().nodeName = name;
    Node node =
        new NodeBuilder()
            .withNewMetadata()
            .withName(name)
            .withLabels(new HashMap<>(Map.of(WellKnown.CAPACITY_TYPE_LABEL, "on-demand")))
            .endMetadata()
            .withNewSpec()
            .withProviderID(claim.getStatus().providerID)
            .endSpec()
            .withNewStatus()
            .endStatus()
            .build();
    return new Pair(claim, node);
  }

  /** A NodeClaim and Node of the NodePool (upstream's BeforeEach). */
  private Pair inPool() {
    return nodeClaimAndNode().inPool(nodePool.getMetadata().getName());
  }

  private void applied(NodePool pool) {
    kube.resources(NodePool.class).resource(pool).createOr(p -> p.update());
  }

  /** Written to the API server; the claim as written (its UID, its version). */
  private Pair applied(Pair pair) {
    NodeClaim claim = kube.resources(NodeClaim.class).resource(pair.claim()).create();
    claim.setStatus(pair.claim().getStatus());
    Node node = kube.nodes().resource(pair.node()).create();
    return new Pair(claim, node);
  }

  /** Upstream's ExpectObjectReconciled on the Node. */
  private NodeHealth.Outcome reconciled(Pair pair) {
    return health.check(pair.claim(), pair.node());
  }

  private NodeClaim stored(Pair pair) {
    NodeClaim claim =
        kube.resources(NodeClaim.class).withName(pair.claim().getMetadata().getName()).get();
    assertThat(claim).as("the NodeClaim exists").isNotNull();
    return claim;
  }

  private boolean deleting(Pair pair) {
    return stored(pair).getMetadata().getDeletionTimestamp() != null;
  }

  private Map<String, String> annotations(Pair pair) {
    Map<String, String> annotations = stored(pair).getMetadata().getAnnotations();
    return annotations == null ? Map.of() : annotations;
  }

  /**
   * Time passes; then the NodePool and the pair are applied and the Node reconciled, as most of
   * upstream's cases go: the pair as applied.
   */
  private Pair reconciledAfter(Duration passed, Pair pair) {
    clock.advance(passed);
    applied(nodePool);
    Pair applied = applied(pair);
    reconciled(applied);
    return applied;
  }

  /** Upstream's most common case: BadNode False since now, reconciled an hour later. */
  private Pair unhealthyForAnHour() {
    return reconciledAfter(HOUR, inPool().unhealthy(clock.instant()));
  }

  // Context("Reconciliation")

  @Test
  void shouldDeleteNodesThatAreUnhealthyByTheCloudProvider() {
    Pair pair = unhealthyForAnHour();
    assertThat(deleting(pair)).isTrue();
  }

  @Test
  void shouldNotDeleteNodeWhenUnhealthyTypeDoesNotMatchCloudProviderPassedInValue() {
    Pair pair =
        reconciledAfter(HOUR, inPool().condition("FakeHealthyNode", "False", clock.instant()));
    assertThat(deleting(pair)).isFalse();
  }

  @Test
  void shouldNotDeleteNodeWhenHealthStatusDoesNotMatchCloudProviderPassedInValue() {
    Pair pair = reconciledAfter(HOUR, inPool().condition("BadNode", "True", clock.instant()));
    assertThat(deleting(pair)).isFalse();
  }

  @Test
  void shouldNotDeleteNodeWhenHealthDurationIsNotReached() {
    Pair pair = reconciledAfter(Duration.ofMinutes(20), inPool().unhealthy(clock.instant()));
    assertThat(deleting(pair)).isFalse();
  }

  @Test
  void shouldSetAnnotationTerminationGracePeriodWhenForceTerminationIsStarted() {
    Pair pair = unhealthyForAnHour();
    assertThat(annotations(pair))
        .containsEntry(WellKnown.TERMINATION_TIMESTAMP_ANNOTATION, "2026-12-02T13:00:00Z");
  }

  @Test
  void shouldNotRespectTerminationGracePeriodIfSetOnTheNodepool() {
    Pair pair = inPool().unhealthy(clock.instant());
    pair.claim()
        .getMetadata()
        .setAnnotations(
            Map.of(
                WellKnown.TERMINATION_TIMESTAMP_ANNOTATION,
                clock.instant().plus(Duration.ofMinutes(120)).toString()));
    pair = reconciledAfter(HOUR, pair);
    assertThat(annotations(pair))
        .containsEntry(WellKnown.TERMINATION_TIMESTAMP_ANNOTATION, "2026-12-02T13:00:00Z");
  }

  @Test
  void shouldNotUpdateTerminationGracePeriodIfSetBeforeTheCurrentTime() {
    String terminationTime = clock.instant().minus(Duration.ofMinutes(3)).toString();
    Pair pair = inPool().unhealthy(clock.instant());
    pair.claim()
        .getMetadata()
        .setAnnotations(Map.of(WellKnown.TERMINATION_TIMESTAMP_ANNOTATION, terminationTime));
    pair = reconciledAfter(HOUR, pair);
    assertThat(annotations(pair))
        .containsEntry(WellKnown.TERMINATION_TIMESTAMP_ANNOTATION, terminationTime);
  }

  @Test
  void shouldReturnTheRequeueIntervalForTheConditionClosestToItsTerminationDuration() {
    cloud.repairPolicies(
        new RepairPolicy("BadNode", "False", Duration.ofMinutes(60)),
        new RepairPolicy("ValidUnhealthyCondition", "False", Duration.ofMinutes(30)));
    Pair pair =
        inPool()
            .condition("ValidUnhealthyCondition", "False", clock.instant())
            .condition("BadNode", "False", clock.instant());
    applied(nodePool);
    pair = applied(pair);
    clock.advance(Duration.ofMinutes(27));
    assertThat(reconciled(pair).lookAgainIn()).isEqualTo(Duration.ofMinutes(3));
  }

  @Test
  void shouldReturnTheRequeueIntervalForTheTimeBetweenNowAndWhenTheNodeClaimTerminationTime() {
    Pair pair = inPool().unhealthy(clock.instant());
    applied(nodePool);
    pair = applied(pair);
    clock.advance(Duration.ofMinutes(27));
    assertThat(reconciled(pair).lookAgainIn()).isEqualTo(Duration.ofMinutes(3));
  }

  // Context("Forceful termination")

  @Test
  void shouldIgnoreNodeDisruptionBudgets() {
    NodePool.Budget none = new NodePool.Budget();
    none.nodes = "0";
    nodePool.getSpec().disruption = new NodePool.Disruption();
    nodePool.getSpec().disruption.budgets.add(none);
    Pair pair = unhealthyForAnHour();
    assertThat(deleting(pair)).isTrue();
  }

  @Test
  void shouldIgnoreDoNotDisruptOnANode() {
    Pair pair = inPool().unhealthy(clock.instant());
    pair.node().getMetadata().setAnnotations(Map.of(WellKnown.DO_NOT_DISRUPT_ANNOTATION, "true"));
    pair = reconciledAfter(HOUR, pair);
    assertThat(deleting(pair)).isTrue();
  }

  /** Ten claims and Nodes, the first three unhealthy since now, applied; an hour passes. */
  private List<Pair> tenWithThreeUnhealthy(String pool) {
    List<Pair> pairs = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      Pair pair = nodeClaimAndNode();
      if (i < 3) {
        pair.unhealthy(clock.instant());
      }
      pairs.add(applied(pool == null ? pair : pair.inPool(pool)));
    }
    clock.advance(HOUR);
    return pairs;
  }

  /** Each of these is held back for 5 minutes and not deleted. */
  private void heldBack(List<Pair> pairs) {
    for (Pair pair : pairs) {
      assertThat(reconciled(pair).lookAgainIn()).isEqualTo(Duration.ofMinutes(5));
      assertThat(deleting(pair)).isFalse();
    }
  }

  private List<String> repairBlockedMessages() throws InterruptedException {
    return WrittenEvents.in(kube, recorder, "default").stream()
        .filter(e -> "NodeRepairBlocked".equals(e.getReason()))
        .map(Event::getMessage)
        .toList();
  }

  @Test
  void shouldIgnoreUnhealthyNodesIfMoreThen20PercentOfTheNodesAreUnhealthyInANodepool()
      throws Exception {
    applied(nodePool);
    List<Pair> pairs = tenWithThreeUnhealthy(nodePool.getMetadata().getName());
    heldBack(pairs.subList(0, 2));
    // Deduplicated by the Node, its NodeClaim and its NodePool: the second Node's by the first two.
    assertThat(repairBlockedMessages())
        .hasSize(5)
        .containsOnly("more than 20% nodes are unhealthy in the nodepool");
  }

  @Test
  void shouldIgnoreUnhealthyNodesIfMoreThen20PercentOfTheNodesAreUnhealthyInACluster()
      throws Exception {
    List<Pair> pairs = tenWithThreeUnhealthy(null);
    heldBack(pairs.subList(0, 3));
    assertThat(repairBlockedMessages())
        .hasSize(6)
        .containsOnly("more then 20% nodes are unhealthy in the cluster");
  }

  @Test
  void shouldConsiderRoundUpWhenThereIsALowNumberOfNodesForANodepool() {
    applied(nodePool);
    List<Pair> pairs = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Pair pair = inPool();
      if (i == 0) {
        pair.unhealthy(clock.instant());
      }
      pairs.add(applied(pair));
    }
    clock.advance(HOUR);
    reconciled(pairs.get(0));
    assertThat(deleting(pairs.get(0))).isTrue();
  }

  // Context("Metrics")

  @Test
  void shouldFireAKarpenterNodeclaimsDisruptedTotalMetricWhenUnhealthy() {
    Pair pair = unhealthyForAnHour();
    assertThat(deleting(pair)).isTrue();
    String scraped = metrics.scrape();
    assertThat(scraped)
        .contains(
            "karpenter_nodeclaims_disrupted_total{capacity_type=\"on-demand\","
                + "consolidation_policy=\"\",nodepool=\"default\",reason=\"unhealthy\","
                + "termination_mode=\"graceful\",} 1.0")
        .contains(
            "karpenter_nodeclaims_unhealthy_disrupted_total{capacity_type=\"on-demand\","
                + "condition=\"bad_node\",image_id=\"\",nodepool=\"default\",} 1.0");
  }

  // WarmMetal's own

  @Test
  void aClaimBeingDeletedAlreadyIsMadeToTerminateNowAndNotCountedAgain() {
    applied(nodePool);
    Pair pair = applied(inPool().unhealthy(clock.instant()));
    clock.advance(HOUR);
    kube.resources(NodeClaim.class).resource(pair.claim()).delete(); // consolidated, say
    NodeClaim deleting = stored(pair);
    deleting.setStatus(pair.claim().getStatus());
    Pair beingDeleted = new Pair(deleting, pair.node());

    assertThat(reconciled(beingDeleted).wrote()).isTrue();
    assertThat(annotations(pair))
        .containsEntry(WellKnown.TERMINATION_TIMESTAMP_ANNOTATION, "2026-12-02T13:00:00Z");
    assertThat(metrics.scrape()).doesNotContain("karpenter_nodeclaims_unhealthy_disrupted_total{");
    clock.advance(Duration.ofSeconds(1));
    assertThat(reconciled(new Pair(stored(pair), pair.node())).wrote())
        .as("its termination time is past: nothing more to write")
        .isFalse();
  }

  @Test
  void conditionNamesAreLabelledInSnakeCaseAsUpstreamWritesThem() {
    assertThat(NodeHealth.snakeCase("Ready")).isEqualTo("ready");
    assertThat(NodeHealth.snakeCase("BadNode")).isEqualTo("bad_node");
    assertThat(NodeHealth.snakeCase("AcceleratedHardwareReady"))
        .isEqualTo("accelerated_hardware_ready");
  }
}
