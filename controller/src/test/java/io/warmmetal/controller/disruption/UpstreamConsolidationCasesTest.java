package io.warmmetal.controller.disruption;

import static io.warmmetal.controller.disruption.TestCluster.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeClassReference;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Upstream Karpenter's consolidation suite ({@code
 * pkg/controllers/disruption/consolidation_test.go} at v1.14.0) written again over whole {@link
 * Disruption} passes on fabric8's mock API server, each case named after its Describe/Context/It
 * path (a DescribeTable's on-demand Entry as its last part). Upstream's NodePool here: {@code
 * WhenEmptyOrUnderutilized}, budget 100%; its "most expensive" instance type is our {@code large},
 * its cheapest our {@code small}; the pass runs a minute after the pods' last event, past {@code
 * consolidateAfter}.
 *
 * <p>Not ported, and why:
 *
 * <ul>
 *   <li>Every spot Entry and spot-to-spot case (Replace: the 15-cheapest, flexibility and minValues
 *       truncation cases; "won't replace node if any spot replacement is more expensive"; "can
 *       merge 3 nodes into 1 if the candidates have both spot and on-demand"): no spot.
 *   <li>Replace › Consolidation should fail if filterByPrice breaks the minimum requirement from
 *       the NodePools; MinValuesPolicy (1): a replacement here is one planned type, not a list of
 *       options trimmed against minValues.
 *   <li>Metrics › should correctly report invalidated commands (9 entries), TTL (7),
 *       Multi-NodeClaim › should wait for the node TTL / should continue to single nodeclaim
 *       consolidation when multi-nodeclaim consolidation fails validation: upstream validates a
 *       command again after a wait; ours decides on nodes already quiet for consolidateAfter and
 *       acts at once (docs/controller.md, Consolidation row).
 *   <li>Delete › can delete nodes, when non-Karpenter capacity can fit pods; Topology Consideration
 *       › can replace node maintaining zonal topology spread; Delete › should consider initialized
 *       nodes before uninitialized nodes (100 nodes of two fake types): this harness plans only our
 *       NodeClaims' nodes, without zones; the scheduler's own suites cover those ({@code
 *       UpstreamSchedulingCasesTest}).
 *   <li>Parallelization › should not schedule an additional node when receiving pending pods while
 *       consolidating: it races the provisioner against a command; ours plans pending pods first in
 *       the same pass (Simulate Scheduling in {@code UpstreamDisruptionCasesTest}).
 *   <li>Reserved Capacity (3): no reserved capacity. Preferences (2): relaxing preferred affinity
 *       is the scheduler's ({@code UpstreamSchedulingCasesTest}).
 *   <li>Buffer Pods (4): upstream counts a buffer's pods on nodes; ours plans a buffer's virtual
 *       pods and asks where they go ({@code UpstreamEmptinessCasesTest}, {@code EmptinessTest}).
 * </ul>
 */
@EnableKubernetesMockClient(crud = true)
class UpstreamConsolidationCasesTest {
  private static final Instant NOW = T0.plusSeconds(60); // past consolidateAfter (30 s)
  KubernetesClient kube;
  private final TestCluster cluster = new TestCluster();
  private ApiServerPasses passes;

  @BeforeEach
  void start() throws Exception {
    passes = new ApiServerPasses(kube, cluster);
    cluster.budget("100%");
  }

  @AfterEach
  void stop() {
    passes.close();
  }

  private void passOnce() throws Exception {
    passes.create();
    passes.pass(NOW);
  }

  /** Brings the replacements launched up and runs the pass that finishes their commands. */
  private void replacementsReady() throws Exception {
    passes.replacementsUp(true);
    passes.pass(NOW.plusSeconds(1));
  }

  private List<String> unconsolidatable() throws Exception {
    return passes.events("default").stream()
        .filter(e -> "Unconsolidatable".equals(e.getReason()))
        .map(Event::getMessage)
        .toList();
  }

  /** The dearest node, with one pod a cheaper node can take. */
  private Pod largeNodeWithPod() {
    cluster.node("a", cluster.large);
    return cluster.pod("web", "a", 500);
  }

  /** Upstream's Delete context: two of the cheapest nodes, three pods (two on the first). */
  private void twoSmallNodesThreePods() {
    cluster.node("a", cluster.small);
    cluster.node("b", cluster.small);
    cluster.pod("a-1", "a", 500);
    cluster.pod("a-2", "a", 500);
    cluster.pod("b-1", "b", 500);
  }

  private static Pod ready(Pod pod) {
    pod.getStatus()
        .getConditions()
        .add(new PodConditionBuilder().withType("Ready").withStatus("True").build());
    return pod;
  }

  private static void doNotDisrupt(Pod pod, String value) {
    TestCluster.annotate(pod, WellKnown.DO_NOT_DISRUPT_ANNOTATION, value);
  }

  // ---------------------------------------------------------------------------------------------
  // Events
  // ---------------------------------------------------------------------------------------------

  @Test
  @DisplayName(
      "Consolidation › Events › should not fire an event for ConsolidationDisabled when the"
          + " NodePool has consolidation set to WhenEmptyOrUnderutilized")
  void noEventWhenUnderutilizedIsOn() throws Exception {
    cluster.node("a", cluster.large);
    passOnce();
    assertThat(unconsolidatable()).isEmpty();
  }

  @Test
  @DisplayName(
      "Consolidation › Events › should fire an event for ConsolidationDisabled when the NodePool has"
          + " consolidation set to WhenEmpty")
  void eventWhenEmptyOnly() throws Exception {
    cluster.pool.getSpec().disruption.consolidationPolicy = "WhenEmpty";
    largeNodeWithPod();
    passOnce();
    // Upstream counts 4 calls (Node and NodeClaim, from multi- and single-node); ours are
    // deduplicated per object, as upstream's recorder does outside its tests.
    assertThat(unconsolidatable())
        .containsExactly(
            "NodePool \"default\" has consolidation policy WhenEmpty, but node is not empty",
            "NodePool \"default\" has consolidation policy WhenEmpty, but node is not empty");
  }

  @Test
  @DisplayName(
      "Consolidation › Events › should fire an event for ConsolidationDisabled when the NodePool has"
          + " consolidateAfter set to 'Never'")
  void eventWhenNever() throws Exception {
    cluster.pool.getSpec().disruption.consolidateAfter = "Never";
    largeNodeWithPod();
    passOnce();
    assertThat(unconsolidatable())
        .containsExactly(
            "NodePool \"default\" has consolidation disabled",
            "NodePool \"default\" has consolidation disabled");
  }

  @Test
  @DisplayName(
      "Consolidation › Events › should fire an event when a candidate does not have a resolvable"
          + " instance type")
  void unresolvableInstanceType() throws Exception {
    NodeClaim a = cluster.node("a", cluster.large);
    a.getMetadata().getLabels().remove(WellKnown.INSTANCE_TYPE_LABEL);
    cluster.pod("web", "a", 500);
    passOnce();
    // Upstream tells the node and its claim "Instance Type \"\" not found"; ours leaves a node of
    // no known shape out without an event (docs/controller.md, Consolidation row).
    assertThat(passes.claims()).containsExactly("a");
    assertThat(cluster.launched).isEmpty();
    assertThat(unconsolidatable()).isEmpty();
  }

  @Test
  @DisplayName(
      "Consolidation › Events › should fire an event when a candidate does not have the capacity"
          + " type label")
  void noCapacityTypeLabel() throws Exception {
    largeNodeWithPod();
    passOnce();
    // Upstream needs the capacity type to price a node; every node here is on-demand, priced by
    // its type alone: a claim without the label is consolidated (replaced by a cheaper one).
    assertThat(cluster.claims.get(0).getMetadata().getLabels())
        .doesNotContainKey(WellKnown.CAPACITY_TYPE_LABEL);
    assertThat(cluster.launched).hasSize(1);
    assertThat(unconsolidatable()).isEmpty();
  }

  @Test
  @DisplayName(
      "Consolidation › Events › should fire an event when a candidate does not have the zone label")
  void noZoneLabel() throws Exception {
    largeNodeWithPod();
    passOnce();
    // Upstream needs the zone to price a node; owned servers may stand in no zone, and are
    // priced by their type alone: consolidated all the same.
    assertThat(cluster.claims.get(0).getMetadata().getLabels())
        .doesNotContainKey(WellKnown.ZONE_LABEL);
    assertThat(cluster.launched).hasSize(1);
    assertThat(unconsolidatable()).isEmpty();
  }

  // ---------------------------------------------------------------------------------------------
  // Metrics, Budgets
  // ---------------------------------------------------------------------------------------------

  @Test
  @DisplayName("Consolidation › Metrics › should correctly report eligible nodes")
  void eligibleNodes() throws Exception {
    cluster.node("a", cluster.large);
    Pod pod = cluster.pod("web", "a", 500);
    doNotDisrupt(pod, "true");
    passOnce();
    Map<String, String> underutilized = Map.of("reason", "underutilized");
    assertThat(passes.metric("karpenter_voluntary_disruption_eligible_nodes", underutilized))
        .isEqualTo(0.0);
    Pod there = kube.pods().inNamespace("default").withName("web").get();
    there.getMetadata().setAnnotations(Map.of());
    kube.pods().resource(there).update();
    passes.pass(NOW.plusSeconds(1));
    assertThat(passes.metric("karpenter_voluntary_disruption_eligible_nodes", underutilized))
        .isEqualTo(1.0);
  }

  private void tenEmptyNodes() {
    for (int i = 0; i < 10; i++) {
      cluster.node("n" + i, cluster.large);
    }
  }

  /**
   * Keeps every claim once deleted (termination's finalizer, as upstream's test NodeClaims have):
   * deleting, they still count against their pool's budget.
   */
  private void finalized() {
    cluster.claims.forEach(
        c -> c.getMetadata().setFinalizers(List.of(WellKnown.TERMINATION_FINALIZER)));
  }

  private int deleted() {
    return (int)
        cluster.claims.stream().filter(c -> passes.deleted(c.getMetadata().getName())).count();
  }

  @Test
  @DisplayName("Consolidation › Budgets › should only allow 3 empty nodes to be disrupted")
  void threeEmpty() throws Exception {
    cluster.budget("30%");
    tenEmptyNodes();
    passOnce();
    assertThat(deleted()).isEqualTo(3);
    assertThat(
            passes.metric(
                "karpenter_nodepools_allowed_disruptions",
                Map.of("nodepool", "default", "reason", "Empty")))
        .isEqualTo(3.0);
  }

  @Test
  @DisplayName("Consolidation › Budgets › should allow all empty nodes to be disrupted")
  void allEmpty() throws Exception {
    tenEmptyNodes();
    passOnce();
    assertThat(deleted()).isEqualTo(10);
  }

  @Test
  @DisplayName("Consolidation › Budgets › should allow no empty nodes to be disrupted")
  void noEmpty() throws Exception {
    cluster.budget("0%");
    tenEmptyNodes();
    passOnce();
    assertThat(deleted()).isZero();
  }

  /**
   * Ten of the cheapest nodes with one small pod each: any of them can go, its pod fitting on
   * another.
   */
  private void tenNodesOnePodEach() {
    for (int i = 0; i < 10; i++) {
      cluster.node("n" + i, cluster.small);
      cluster.pod("p" + i, "n" + i, 100);
    }
  }

  @Test
  @DisplayName(
      "Consolidation › Budgets › should only allow 3 nodes to be deleted in multi node"
          + " consolidation delete")
  void threeMulti() throws Exception {
    cluster.budget("30%");
    tenNodesOnePodEach();
    passOnce();
    assertThat(deleted()).isEqualTo(3);
    assertThat(cluster.launched).isEmpty();
  }

  @Test
  @DisplayName(
      "Consolidation › Budgets › should only allow 3 nodes to be deleted in single node"
          + " consolidation delete")
  void threeSingle() throws Exception {
    cluster.budget("30%");
    tenNodesOnePodEach();
    finalized();
    passes.create();
    // Upstream's single-node consolidation deletes one node per pass until the budget is used.
    for (int i = 0; i < 5; i++) {
      passes.pass(NOW.plusSeconds(i));
    }
    assertThat(deleted()).isEqualTo(3);
  }

  /** Three more NodePools of three nodes with a pod each, each with that budget. */
  private void threePools(String budget) {
    for (int p = 0; p < 3; p++) {
      NodePool pool = cluster.pool("pool-" + p);
      TestCluster.budget(pool, budget);
      for (int i = 0; i < 3; i++) {
        String name = "pool-" + p + "-" + i;
        cluster.node(name, cluster.small, pool);
        cluster.pod(name + "-pod", name, 100);
      }
    }
    cluster.pools.remove("default"); // only the three
  }

  private long deletedOf(String pool) {
    return cluster.claims.stream()
        .filter(c -> pool.equals(Candidate.poolOf(c)))
        .filter(c -> passes.deleted(c.getMetadata().getName()))
        .count();
  }

  @Test
  @DisplayName("Consolidation › Budgets › should allow 2 nodes from each nodePool to be deleted")
  void twoPerPool() throws Exception {
    threePools("50%");
    finalized();
    passOnce();
    // Upstream deletes two of each pool's three in one multi-node command; ours starts one
    // command a pass: a few passes take them.
    for (int round = 1; round <= 4; round++) {
      passes.pass(NOW.plusSeconds(round));
    }
    for (int p = 0; p < 3; p++) {
      assertThat(deletedOf("pool-" + p)).isEqualTo(2);
    }
  }

  @Test
  @DisplayName("Consolidation › Budgets › should allow all nodes from each nodePool to be deleted")
  void allPerPool() throws Exception {
    threePools("100%");
    finalized();
    passOnce();
    // Upstream: all 9 in one command (its test's pods fit on no node left: each went to none);
    // here the last pod must land somewhere: all but one node go.
    for (int round = 1; round <= 9; round++) {
      passes.pass(NOW.plusSeconds(round));
    }
    assertThat(deleted()).isEqualTo(8);
  }

  @Test
  @DisplayName("Consolidation › Budgets › should allow no nodes from each nodePool to be deleted")
  void nonePerPool() throws Exception {
    threePools("0%");
    passOnce();
    assertThat(deleted()).isZero();
  }

  /**
   * Budget 0 for two passes (the second over the same, unchanged cluster), then 100%: the nodes
   * held back by the budget are looked at again, not remembered as consolidated.
   */
  private void heldByBudgetThenFreed(Runnable free) throws Exception {
    passes.create();
    passes.pass(NOW);
    passes.pass(NOW.plusSeconds(1));
    assertThat(deleted()).isZero();
    free.run();
    passes.pass(NOW.plusSeconds(2));
    assertThat(deleted()).isPositive();
  }

  @Test
  @DisplayName(
      "Consolidation › Budgets › should not mark empty node consolidated if the candidates can't be"
          + " disrupted due to budgets with one nodepool")
  void emptyNotMarkedOnePool() throws Exception {
    cluster.budget("0%");
    tenEmptyNodes();
    heldByBudgetThenFreed(() -> cluster.budget("100%"));
  }

  @Test
  @DisplayName(
      "Consolidation › Budgets › should not mark empty node consolidated if all candidates can't be"
          + " disrupted due to budgets with many nodepools")
  void emptyNotMarkedManyPools() throws Exception {
    for (int p = 0; p < 3; p++) {
      NodePool pool = cluster.pool("pool-" + p);
      TestCluster.budget(pool, "0%");
      cluster.node("pool-" + p + "-0", cluster.large, pool);
    }
    heldByBudgetThenFreed(() -> cluster.pools.values().forEach(p -> TestCluster.budget(p, "100%")));
  }

  @Test
  @DisplayName(
      "Consolidation › Budgets › should not mark multi node consolidated if the candidates can't be"
          + " disrupted due to budgets with one nodepool")
  void multiNotMarkedOnePool() throws Exception {
    cluster.budget("0%");
    tenNodesOnePodEach();
    heldByBudgetThenFreed(() -> cluster.budget("100%"));
  }

  @Test
  @DisplayName(
      "Consolidation › Budgets › should not mark multi node consolidated if all candidates can't be"
          + " disrupted due to budgets with many nodepools")
  void multiNotMarkedManyPools() throws Exception {
    threePools("0%");
    heldByBudgetThenFreed(() -> cluster.pools.values().forEach(p -> TestCluster.budget(p, "100%")));
  }

  @Test
  @DisplayName(
      "Consolidation › Budgets › should not mark single node consolidated if the candidates can't"
          + " be disrupted due to budgets with one nodepool")
  void singleNotMarkedOnePool() throws Exception {
    cluster.budget("0%");
    cluster.node("a", cluster.large);
    cluster.pod("web", "a", 500); // a single node: only single-node consolidation replaces it
    passes.create();
    passes.pass(NOW);
    passes.pass(NOW.plusSeconds(1));
    assertThat(cluster.launched).isEmpty();
    cluster.budget("100%");
    passes.pass(NOW.plusSeconds(2));
    assertThat(cluster.launched).hasSize(1);
  }

  @Test
  @DisplayName(
      "Consolidation › Budgets › should not mark single node consolidated if all candidates can't"
          + " be disrupted due to budgets with many nodepools")
  void singleNotMarkedManyPools() throws Exception {
    for (int p = 0; p < 3; p++) {
      NodePool pool = cluster.pool("pool-" + p);
      TestCluster.budget(pool, "0%");
      cluster.node("pool-" + p + "-0", cluster.large, pool);
      cluster.pod("pool-" + p + "-pod", "pool-" + p + "-0", 500); // a small node would do
    }
    cluster.pools.remove("default");
    passes.create();
    passes.pass(NOW);
    passes.pass(NOW.plusSeconds(1));
    assertThat(cluster.launched).isEmpty();
    cluster.pools.values().forEach(p -> TestCluster.budget(p, "100%"));
    passes.pass(NOW.plusSeconds(2));
    assertThat(cluster.launched).hasSize(1);
  }

  // ---------------------------------------------------------------------------------------------
  // Replace
  // ---------------------------------------------------------------------------------------------

  @Test
  @DisplayName("Consolidation › Replace › can replace node › if the candidate is on-demand node")
  void canReplace() throws Exception {
    largeNodeWithPod();
    passOnce();
    assertThat(cluster.launched).hasSize(1);
    assertThat(cluster.launched.get(0).get(0).type().name()).isEqualTo("small");
    replacementsReady();
    assertThat(passes.claims()).containsExactly("replacement-1-0");
  }

  @Test
  @DisplayName(
      "Consolidation › Replace › can replace nodes if another nodePool returns no instance types ›"
          + " if the candidate is on-demand node")
  void anotherPoolWithNoTypes() throws Exception {
    NodePool none = cluster.pool("none");
    none.getSpec().template.spec.requirements =
        List.of(new Requirement(WellKnown.INSTANCE_TYPE_LABEL, "In", List.of("no-such-type")));
    largeNodeWithPod();
    passOnce();
    replacementsReady();
    assertThat(passes.claims()).containsExactly("replacement-1-0");
  }

  /** Upstream's Replace setup: the dearest node with three pods a cheaper one can take. */
  private List<Pod> largeNodeThreePods() {
    cluster.node("a", cluster.large);
    return List.of(
        cluster.pod("web-0", "a", 500),
        cluster.pod("web-1", "a", 500),
        cluster.pod("web-2", "a", 500));
  }

  private void pdbOverWeb(String namespace) {
    cluster.guarded("unused", "a"); // a budget of maxUnavailable 0, then pointed at the pods
    cluster.pods.remove(cluster.pods.size() - 1);
    cluster.pdbs.get(0).getMetadata().setNamespace(namespace);
    cluster.pdbs.get(0).getSpec().getSelector().setMatchLabels(Map.of("app", "web"));
  }

  @Test
  @DisplayName(
      "Consolidation › Replace › can replace nodes, considers PDB › if the candidate is on-demand"
          + " node")
  void replaceConsidersPdb() throws Exception {
    largeNodeThreePods()
        .forEach(p -> ready(p).getMetadata().setLabels(new HashMap<>(Map.of("app", "web"))));
    pdbOverWeb("default");
    passOnce();
    assertThat(cluster.launched).isEmpty();
    assertThat(passes.claims()).containsExactly("a");
  }

  @Test
  @DisplayName(
      "Consolidation › Replace › can replace nodes, considers PDB policy › if the candidate is"
          + " on-demand node")
  void replaceConsidersPdbPolicy() throws Exception {
    // Not Ready pods, and a budget whose unhealthyPodEvictionPolicy is AlwaysAllow: they may go.
    largeNodeThreePods().forEach(p -> p.getMetadata().setLabels(Map.of("app", "web")));
    pdbOverWeb("default");
    cluster.pdbs.get(0).getSpec().setUnhealthyPodEvictionPolicy("AlwaysAllow");
    passOnce();
    replacementsReady();
    assertThat(passes.claims()).containsExactly("replacement-1-0");
  }

  @Test
  @DisplayName(
      "Consolidation › Replace › can replace nodes, PDB namespace must match › if the candidate is"
          + " on-demand node")
  void pdbNamespaceMustMatch() throws Exception {
    largeNodeThreePods()
        .forEach(p -> ready(p).getMetadata().setLabels(new HashMap<>(Map.of("app", "web"))));
    pdbOverWeb("other");
    passOnce();
    replacementsReady();
    assertThat(passes.claims()).containsExactly("replacement-1-0");
  }

  /**
   * The dearest node with two pods a cheaper one can take, and a cheap one (annotated as the test
   * says) with a pod and too little room left for them.
   */
  private void replaceBesideAnnotated() {
    cluster.node("a", cluster.large);
    cluster.pod("web-0", "a", 1500);
    cluster.pod("web-1", "a", 1500);
    cluster.node("annotated", cluster.small);
    cluster.pod("web-2", "annotated", 1500);
  }

  @Test
  @DisplayName(
      "Consolidation › Replace › can replace nodes, considers karpenter.sh/do-not-disrupt set to"
          + " true on nodes › if the candidate is on-demand node")
  void replaceBesideDoNotDisruptNode() throws Exception {
    replaceBesideAnnotated();
    TestCluster.annotate(cluster.claims.get(1), WellKnown.DO_NOT_DISRUPT_ANNOTATION, "true");
    passOnce();
    replacementsReady();
    assertThat(passes.claims()).containsExactly("annotated", "replacement-1-0");
  }

  @Test
  @DisplayName(
      "Consolidation › Replace › can replace nodes, considers karpenter.sh/do-not-disrupt set to"
          + " true on pods › if the candidate is on-demand node")
  void replaceBesideDoNotDisruptPod() throws Exception {
    replaceBesideAnnotated();
    doNotDisrupt(cluster.pods.get(2), "true");
    passOnce();
    replacementsReady();
    assertThat(passes.claims()).containsExactly("annotated", "replacement-1-0");
  }

  @Test
  @DisplayName(
      "Consolidation › Replace › won't replace on-demand node if on-demand replacement is more"
          + " expensive")
  void noDearerReplacement() throws Exception {
    cluster.node("a", cluster.small);
    cluster.pod("web", "a", 500); // the cheapest type already
    passOnce();
    assertThat(cluster.launched).isEmpty();
    assertThat(passes.claims()).containsExactly("a");
  }

  // ---------------------------------------------------------------------------------------------
  // Delete
  // ---------------------------------------------------------------------------------------------

  @Test
  @DisplayName("Consolidation › Delete › can delete nodes")
  void canDelete() throws Exception {
    twoSmallNodesThreePods();
    passOnce();
    assertThat(cluster.launched).isEmpty();
    assertThat(passes.claims()).containsExactly("a");
  }

  @Test
  @DisplayName(
      "Consolidation › Delete › does not delete nodes with pod churn, deletes nodes without pod"
          + " churn")
  void podChurn() throws Exception {
    cluster.node("a", cluster.small);
    cluster.node("b", cluster.small);
    cluster.claims.get(0).getStatus().lastPodEventTime = NOW.toString(); // a pod just went
    passOnce();
    assertThat(passes.claims()).containsExactly("a");
    assertThat(
            passes.metric(
                "karpenter_voluntary_disruption_decisions_total",
                Map.of("decision", "delete", "consolidation_type", "empty")))
        .isEqualTo(1.0);
  }

  @Test
  @DisplayName("Consolidation › Delete › can delete nodes if another nodePool has no node template")
  void anotherPoolWithoutTemplate() throws Exception {
    NodePool bare = cluster.pool("bare");
    bare.getSpec().template.spec.nodeClassRef = null;
    bare.getSpec().template.spec.requirements = List.of();
    twoSmallNodesThreePods();
    passOnce();
    assertThat(passes.claims()).containsExactly("a");
  }

  @Test
  @DisplayName("Consolidation › Delete › can delete nodes, considers PDB")
  void deleteConsidersPdb() throws Exception {
    twoSmallNodesThreePods();
    // a's pods are Ready under a budget that lets none go; b's is not covered
    for (int i = 0; i < 2; i++) {
      ready(cluster.pods.get(i)).getMetadata().setLabels(Map.of("app", "web"));
    }
    pdbOverWeb("default");
    cluster.pods.get(2).getMetadata().setLabels(Map.of("app", "other"));
    passOnce();
    // b goes (its pod fits on a); a, held by the budget, stays.
    assertThat(passes.claims()).containsExactly("a");
  }

  @Test
  @DisplayName(
      "Consolidation › Delete › can delete nodes, considers karpenter.sh/do-not-disrupt set to true"
          + " on nodes")
  void deleteConsidersDoNotDisruptNode() throws Exception {
    twoSmallNodesThreePods();
    TestCluster.annotate(cluster.claims.get(1), WellKnown.DO_NOT_DISRUPT_ANNOTATION, "true");
    TestCluster.annotate(cluster.nodes.get(1), WellKnown.DO_NOT_DISRUPT_ANNOTATION, "true");
    passOnce();
    assertThat(passes.claims()).containsExactly("b");
  }

  @Test
  @DisplayName(
      "Consolidation › Delete › can delete nodes, considers karpenter.sh/do-not-disrupt set to true"
          + " on pods")
  void deleteConsidersDoNotDisruptPod() throws Exception {
    twoSmallNodesThreePods();
    doNotDisrupt(cluster.pods.get(2), "true");
    passOnce();
    assertThat(passes.claims()).containsExactly("b");
  }

  @Test
  @DisplayName(
      "Consolidation › Delete › does not consolidate nodes with karpenter.sh/do-not-disrupt set to"
          + " true on pods when the NodePool's TerminationGracePeriod is not nil")
  void doNotDisruptWithGracePeriod() throws Exception {
    twoSmallNodesThreePods();
    cluster.pods.forEach(p -> doNotDisrupt(p, "true"));
    cluster.claims.forEach(c -> c.getSpec().terminationGracePeriod = "300s");
    passOnce();
    assertThat(passes.claims()).containsExactly("a", "b");
  }

  @Test
  @DisplayName(
      "Consolidation › Delete › does not consolidate nodes with pods with blocking PDBs when the"
          + " NodePool's TerminationGracePeriod is not nil")
  void blockingPdbWithGracePeriod() throws Exception {
    twoSmallNodesThreePods();
    cluster.pods.forEach(p -> ready(p).getMetadata().setLabels(Map.of("app", "web")));
    pdbOverWeb("default");
    cluster.claims.forEach(c -> c.getSpec().terminationGracePeriod = "300s");
    passOnce();
    assertThat(passes.claims()).containsExactly("a", "b");
  }

  @Test
  @DisplayName(
      "Consolidation › Delete › does not consolidate nodes with pods that have a duration-based"
          + " do-not-disrupt annotation that is still active")
  void durationDoNotDisruptActive() throws Exception {
    twoSmallNodesThreePods();
    Pod held = cluster.pods.get(2);
    doNotDisrupt(held, "2m");
    held.getStatus().setStartTime(NOW.toString());
    passOnce();
    // b is held for two more minutes; a goes (its pods fit on b).
    assertThat(passes.claims()).containsExactly("b");
  }

  @Test
  @DisplayName(
      "Consolidation › Delete › can consolidate nodes after duration-based do-not-disrupt"
          + " annotation expires")
  void durationDoNotDisruptExpired() throws Exception {
    twoSmallNodesThreePods();
    cluster.pods.forEach(
        p -> {
          doNotDisrupt(p, "2m");
          p.getStatus().setStartTime(NOW.toString());
        });
    passOnce();
    assertThat(passes.claims()).containsExactly("a", "b");
    passes.pass(NOW.plusSeconds(180));
    assertThat(passes.claims()).containsExactly("a");
  }

  @Test
  @DisplayName(
      "Consolidation › Delete › can delete nodes, considers invalid do-not-disrupt annotation"
          + " format as not blocking")
  void invalidDoNotDisrupt() throws Exception {
    twoSmallNodesThreePods();
    doNotDisrupt(cluster.pods.get(2), "invalid-format");
    passOnce();
    assertThat(passes.claims()).containsExactly("a");
  }

  @Test
  @DisplayName("Consolidation › Delete › can delete nodes, evicts pods without an ownerRef")
  void podsWithoutOwner() throws Exception {
    twoSmallNodesThreePods(); // TestCluster's pods have no owner
    assertThat(cluster.pods).allMatch(p -> p.getMetadata().getOwnerReferences().isEmpty());
    passOnce();
    assertThat(passes.claims()).containsExactly("a");
  }

  @Test
  @DisplayName(
      "Consolidation › Delete › won't delete node if it would require pods to schedule on an"
          + " uninitialized node")
  void notOntoUninitialized() throws Exception {
    twoSmallNodesThreePods();
    cluster
        .claims
        .get(0)
        .getStatus()
        .conditions
        .removeIf(c -> Conditions.INITIALIZED.equals(c.getType()));
    cluster.machines = false; // no replacement either: only a deletion onto a would do
    passOnce();
    assertThat(passes.claims()).containsExactly("a", "b");
  }

  @Test
  @DisplayName(
      "Consolidation › Delete › should not consolidate pods onto a destination node that is under"
          + " its consolidateAfter window")
  void destinationUnderConsolidateAfter() throws Exception {
    cluster.pool.getSpec().disruption.consolidateAfter = "1m";
    twoSmallNodesThreePods();
    passes.create();
    passes.pass(T0.plusSeconds(1)); // the pods just bound
    assertThat(passes.claims()).containsExactly("a", "b");
    passes.pass(T0.plusSeconds(120));
    assertThat(passes.claims()).containsExactly("a");
  }

  @Test
  @DisplayName(
      "Consolidation › Delete › should consolidate pods onto a destination node with"
          + " consolidateAfter set to Never")
  void destinationUnderNever() throws Exception {
    NodePool destination = cluster.pool("destination");
    destination.getSpec().disruption.consolidateAfter = "Never";
    cluster.node("a", cluster.small);
    cluster.pod("web", "a", 500);
    cluster.node("dest", cluster.small, destination);
    passOnce();
    assertThat(passes.claims()).containsExactly("dest");
  }

  @Test
  @DisplayName(
      "Consolidation › Delete › should replace a node with a cheaper one even when consolidateAfter"
          + " has not expired")
  void replaceAfterConsolidateAfter() throws Exception {
    cluster.pool.getSpec().disruption.consolidateAfter = "1m";
    largeNodeWithPod();
    passes.create();
    passes.pass(T0.plusSeconds(120));
    replacementsReady();
    assertThat(passes.claims()).containsExactly("replacement-1-0");
  }

  @Test
  @DisplayName("Consolidation › Delete › can delete nodes with a permanently pending pod")
  void permanentlyPending() throws Exception {
    twoSmallNodesThreePods();
    Pod pending = cluster.pending("pending", 100);
    pending.getSpec().setNodeSelector(Map.of("non-existent", "node-label"));
    passOnce();
    assertThat(passes.claims()).containsExactly("a");
    assertThat(kube.pods().inNamespace("default").withName("pending").get().getSpec().getNodeName())
        .isNull();
  }

  @Test
  @DisplayName(
      "Consolidation › Delete › won't delete nodes if it would make a non-pending pod go pending")
  void noPodGoesPending() throws Exception {
    twoSmallNodesThreePods();
    cluster.claims.get(0).getMetadata().getLabels().put("foo", "1");
    cluster.claims.get(1).getMetadata().getLabels().put("foo", "2");
    cluster.pods.get(0).getSpec().setNodeSelector(Map.of("foo", "1"));
    cluster.pods.get(1).getSpec().setNodeSelector(Map.of("foo", "1"));
    cluster.pods.get(2).getSpec().setNodeSelector(Map.of("foo", "2"));
    passOnce();
    assertThat(passes.claims()).containsExactly("a", "b");
  }

  @Test
  @DisplayName("Consolidation › Delete › can delete nodes while an invalid node pool exists")
  void invalidPoolBeside() throws Exception {
    NodePool bad = cluster.pool("bad-nodepool");
    bad.getSpec().template.spec.nodeClassRef = new NodeClassReference();
    bad.getSpec().template.spec.nodeClassRef.group = "karpenter.test.sh";
    bad.getSpec().template.spec.nodeClassRef.kind = "TestNodeClass";
    bad.getSpec().template.spec.nodeClassRef.name = "non-existent";
    twoSmallNodesThreePods();
    passOnce();
    assertThat(passes.claims()).containsExactly("a");
  }

  // ---------------------------------------------------------------------------------------------
  // Multi-NodeClaim, Node Lifetime, Topology, Parallelization, Static NodePool
  // ---------------------------------------------------------------------------------------------

  @Test
  @DisplayName(
      "Consolidation › Multi-NodeClaim › can merge 3 nodes into 1 › if the candidate is on-demand"
          + " node")
  void mergeThreeIntoOne() throws Exception {
    for (String n : List.of("a", "b", "c")) {
      cluster.node(n, cluster.large);
      cluster.pod(n + "-pod", n, 1000);
    }
    passOnce();
    assertThat(cluster.launched).hasSize(1);
    replacementsReady();
    assertThat(passes.claims()).containsExactly("replacement-1-0");
  }

  @Test
  @DisplayName(
      "Consolidation › Multi-NodeClaim › won't merge 2 nodes into 1 of the same type › if the"
          + " candidate is on-demand node")
  void noMergeIntoSameType() throws Exception {
    cluster.node("a", cluster.small);
    cluster.node("b", cluster.small);
    cluster.pod("a-1", "a", 500);
    cluster.pod("b-1", "b", 500);
    cluster.pod("b-2", "b", 500);
    passOnce();
    // Not both replaced by one new node of their own type: a deleted, its pod moving to b.
    assertThat(cluster.launched).isEmpty();
    assertThat(passes.claims()).containsExactly("b");
  }

  @Test
  @DisplayName(
      "Consolidation › Multi-NodeClaim › should consolidate multiple empty nodes via"
          + " multi-nodeclaim consolidation › if the candidate is on-demand node")
  void multipleEmpty() throws Exception {
    for (String n : List.of("a", "b", "c")) {
      cluster.node(n, cluster.large);
    }
    passOnce();
    assertThat(passes.claims()).isEmpty();
  }

  @Test
  @DisplayName(
      "Consolidation › Node Lifetime Consideration › should consolidate the node with best savings"
          + " ratio first")
  void bestSavingsRatioFirst() throws Exception {
    cluster.node("a", cluster.small);
    cluster.node("b", cluster.small);
    cluster.pod("a-1", "a", 100);
    cluster.pod("a-2", "a", 100);
    cluster.pod("b-1", "b", 100);
    cluster.budget("1"); // one node at a time: the order decides which
    passOnce();
    // Same price, b disrupts fewer pods: b's savings per disruption are the higher.
    assertThat(passes.claims()).containsExactly("a");
  }

  @Test
  @DisplayName(
      "Consolidation › Topology Consideration › won't delete node if it would violate pod"
          + " anti-affinity")
  void antiAffinity() throws Exception {
    for (String n : List.of("a", "b", "c")) {
      cluster.node(n, cluster.small);
      Pod pod = cluster.pod(n + "-pod", n, 100);
      TestCluster.oneAPerNode(pod, "spread");
    }
    cluster.machines = false; // the cheapest type already: nothing to replace them with
    passOnce();
    assertThat(passes.claims()).containsExactly("a", "b", "c");
  }

  @Test
  @DisplayName(
      "Consolidation › Parallelization › should not consolidate a node that is launched for pods on"
          + " a deleting node")
  void nodeLaunchedForPodsOfADeletingNode() throws Exception {
    NodeClaim old = cluster.node("old", cluster.small);
    old.getMetadata().setFinalizers(List.of(WellKnown.TERMINATION_FINALIZER));
    cluster.pod("web", "old", 2000);
    cluster.node("new", cluster.small); // up for old's pod, which has not moved yet
    passes.create();
    kube.resources(NodeClaim.class).withName("old").delete(); // deleting, held by its finalizer
    passes.pass(NOW);
    assertThat(passes.deleted("new")).isFalse();
  }

  @Test
  @DisplayName("Consolidation › Static NodePool › should not consolidate static NodePool nodes")
  void staticPool() throws Exception {
    cluster.pool.getSpec().replicas = 2L;
    cluster.node("a", cluster.large);
    cluster.node("b", cluster.large);
    cluster.pod("web", "a", 500);
    passOnce();
    assertThat(cluster.launched).isEmpty();
    assertThat(passes.claims()).containsExactly("a", "b");
  }
}
