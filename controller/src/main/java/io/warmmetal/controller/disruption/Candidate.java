package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.DoNotDisrupt;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.state.PodRequests;
import io.warmmetal.controller.state.Pods;
import io.warmmetal.controller.termination.PodBudgets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A node disruption may take away, as upstream's candidates, made once a pass: its NodeClaim, Node
 * and NodePool, the pods it would have to move, whether its pods may all go now ({@code drainable}:
 * no do-not-disrupt pod, no PodDisruptionBudget in the way) and whether they have been quiet for
 * the pool's {@code consolidateAfter} ({@code consolidatable}, upstream's Consolidatable
 * condition).
 */
record Candidate(
    NodeClaim claim,
    Node node,
    NodePool pool,
    List<Pod> pods,
    boolean drainable,
    boolean consolidatable) {

  /**
   * The initialized claims disruption may consider, as upstream's NewCandidate: not being deleted,
   * with a Node, of a NodePool there is, not marked {@code karpenter.sh/do-not-disrupt} (the claim
   * or its Node), not in a command under way. Whether its pods may go now ({@code drainable}) is
   * upstream's ValidatePodsDisruptable: no pod running there (a DaemonSet's or a mirror pod too)
   * protected by do-not-disrupt now, and no pod the drain would evict (neither a terminating or
   * finished one nor a mirror pod) that a PodDisruptionBudget will not let go, or that two budgets
   * cover (the Eviction API refuses those).
   *
   * @param bound the pods bound to each node
   * @param pdbs the PodDisruptionBudgets as they are now
   */
  static List<Candidate> of(
      List<NodeClaim> initialized,
      Map<String, List<Pod>> bound,
      Map<String, Node> nodes,
      Map<String, NodePool> pools,
      PodBudgets pdbs,
      Instant now) {
    return of(initialized, bound, nodes, pools, pdbs, now, (claim, node, why) -> {});
  }

  /** Told why a node disruption leaves be, in upstream's words. */
  @FunctionalInterface
  interface Blocked {
    void blocked(NodeClaim claim, Node node, String why);
  }

  /** As {@link #of(List, Map, Map, Map, PodBudgets, Instant)}, telling {@code blocked} why. */
  static List<Candidate> of(
      List<NodeClaim> initialized,
      Map<String, List<Pod>> bound,
      Map<String, Node> nodes,
      Map<String, NodePool> pools,
      PodBudgets pdbs,
      Instant now,
      Blocked blocked) {
    List<Candidate> candidates = new ArrayList<>();
    for (NodeClaim claim : initialized) {
      NodePool pool = pools.get(poolOf(claim));
      Node node = nodes.get(claim.getStatus().nodeName);
      if (node == null
          || claim.getMetadata().getDeletionTimestamp() != null
          || Commands.underway(claim)) {
        continue;
      }
      if (DoNotDisrupt.marked(claim) || DoNotDisrupt.marked(node)) {
        blocked.blocked(
            claim,
            node,
            "Disruption is blocked through the \""
                + WellKnown.DO_NOT_DISRUPT_ANNOTATION
                + "\" annotation");
        continue;
      }
      if (pool == null) {
        blocked.blocked(claim, node, "NodePool not found (NodePool=" + poolOf(claim) + ")");
        continue;
      }
      List<Pod> onNode = bound.getOrDefault(claim.getStatus().nodeName, List.of());
      List<Pod> running =
          onNode.stream()
              .filter(p -> p.getMetadata().getDeletionTimestamp() == null && !Pods.finished(p))
              .toList();
      boolean protectedNow = running.stream().anyMatch(p -> DoNotDisrupt.active(p, now));
      boolean budgetsAllow = running.stream().filter(p -> !mirror(p)).allMatch(pdbs::allows);
      if (protectedNow || !budgetsAllow) {
        blocked.blocked(claim, node, whyPodsStay(running, pdbs, now));
      }
      candidates.add(
          new Candidate(
              claim,
              node,
              pool,
              onNode.stream().filter(Disruption::reschedulable).toList(),
              !protectedNow && budgetsAllow,
              Consolidation.consolidatable(claim, pool, now)));
    }
    return candidates;
  }

  /** Upstream's words for the first pod that keeps the node's pods from going now. */
  private static String whyPodsStay(List<Pod> running, PodBudgets pdbs, Instant now) {
    for (Pod pod : running) {
      if (DoNotDisrupt.active(pod, now)) {
        return "Pod has \""
            + WellKnown.DO_NOT_DISRUPT_ANNOTATION
            + "\" annotation (Pod="
            + key(pod)
            + ")";
      }
      if (!mirror(pod) && !pdbs.allows(pod)) {
        List<String> budgets = pdbs.blocking(pod);
        return pdbs.covering(pod) > 1
            ? "Eviction does not support multiple PDBs (PodDisruptionBudget(s)="
                + budgets.toString().replace(",", "")
                + ")"
            : "Pdb prevents pod evictions (PodDisruptionBudget="
                + budgets.toString().replace(",", "")
                + ")";
      }
    }
    return "Pods may not go now";
  }

  private static String key(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }

  /**
   * A static pod's mirror (owned by its Node): the drain never evicts it, so no budget over it
   * stands in the way.
   */
  private static boolean mirror(Pod pod) {
    return pod.getMetadata().getAnnotations() != null
            && pod.getMetadata().getAnnotations().containsKey("kubernetes.io/config.mirror")
        || pod.getMetadata().getOwnerReferences() != null
            && pod.getMetadata().getOwnerReferences().stream()
                .anyMatch(o -> "Node".equals(o.getKind()));
  }

  String name() {
    return claim.getMetadata().getName();
  }

  String nodeName() {
    return claim.getStatus().nodeName;
  }

  /** The instance type its claim is labelled with (null if none). */
  String instanceTypeName() {
    return claim.getMetadata().getLabels() == null
        ? null
        : claim.getMetadata().getLabels().get(WellKnown.INSTANCE_TYPE_LABEL);
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
   * whatever do-not-disrupt and the budgets say.
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
