package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.DoNotDisrupt;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.state.PodRequests;
import io.warmmetal.controller.termination.PodBudgets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A node disruption may take away, as upstream's candidates, made once a pass: its NodeClaim, Node
 * (null if not seen) and NodePool, the pods it would have to move, whether a PodDisruptionBudget
 * lets them all go now ({@code drainable}) and whether they have been quiet for the pool's {@code
 * consolidateAfter} ({@code consolidatable}, upstream's Consolidatable condition).
 */
record Candidate(
    NodeClaim claim,
    Node node,
    NodePool pool,
    List<Pod> pods,
    boolean drainable,
    boolean consolidatable) {

  /**
   * The initialized claims disruption may consider: of a NodePool there is; not spared by {@code
   * karpenter.sh/do-not-disrupt} on the claim, its Node or a pod protected now; not in a command
   * under way.
   *
   * @param podsByNode the pods bound to each node that would have to move (no DaemonSet's, none
   *     finished or terminating)
   * @param pdbs the PodDisruptionBudgets as they are now: a node whose pods one will not let go
   *     would never drain (upstream's ValidatePodsDisruptable)
   */
  static List<Candidate> of(
      List<NodeClaim> initialized,
      Map<String, List<Pod>> podsByNode,
      Map<String, Node> nodes,
      Map<String, NodePool> pools,
      PodBudgets pdbs,
      Instant now) {
    List<Candidate> candidates = new ArrayList<>();
    for (NodeClaim claim : initialized) {
      NodePool pool = pools.get(poolOf(claim));
      Node node = nodes.get(claim.getStatus().nodeName);
      List<Pod> pods = podsByNode.getOrDefault(claim.getStatus().nodeName, List.of());
      if (pool == null
          || DoNotDisrupt.marked(claim)
          || Commands.underway(claim)
          || DoNotDisrupt.marked(node)
          || pods.stream().anyMatch(p -> DoNotDisrupt.active(p, now))) {
        continue;
      }
      candidates.add(
          new Candidate(
              claim,
              node,
              pool,
              pods,
              pods.stream().allMatch(pdbs::allows),
              Consolidation.consolidatable(claim, pool, now)));
    }
    return candidates;
  }

  String name() {
    return claim.getMetadata().getName();
  }

  String nodeName() {
    return claim.getStatus().nodeName;
  }

  String poolName() {
    return pool.getMetadata().getName();
  }

  /** No pod to move (a buffer's room may still be held there: {@link Pass#holdsBuffer}). */
  boolean empty() {
    return pods.isEmpty();
  }

  boolean drifted() {
    return Drift.drifted(claim);
  }

  /**
   * Whether a method of the class may take it: a graceful one only if its pods may all go now; an
   * eventual one (drift) also when the claim's {@code terminationGracePeriod} will end the drain
   * whatever the budgets say.
   */
  boolean disruptableBy(Method.DisruptionClass disruptionClass) {
    return drainable
        || disruptionClass == Method.DisruptionClass.EVENTUAL
            && claim.getSpec().terminationGracePeriod != null;
  }

  /** The CPU its pods request: consolidation tries the least busy nodes first. */
  long requestedCpu() {
    return pods.stream().mapToLong(p -> PodRequests.of(p).requests().cpuMilli()).sum();
  }

  /** Whether the claim's node is up: only such nodes are candidates, or destinations for pods. */
  static boolean initialized(NodeClaim claim) {
    return claim.getStatus() != null
        && claim.getStatus().nodeName != null
        && Conditions.isTrue(claim.getStatus().conditions, Conditions.INITIALIZED);
  }

  static String poolOf(NodeClaim claim) {
    return claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL);
  }
}
