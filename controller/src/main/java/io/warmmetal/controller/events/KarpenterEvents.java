package io.warmmetal.controller.events;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The events Karpenter publishes, with its reasons, messages and dedupe rules (upstream's {@code
 * pkg/events} and the controllers' {@code events.go}), so dashboards and alerts written for
 * Karpenter read ours.
 */
public final class KarpenterEvents {
  // provisioning/scheduling
  public static final String NOMINATED = "Nominated";
  public static final String FAILED_SCHEDULING = "FailedScheduling";
  public static final String NO_COMPATIBLE_INSTANCE_TYPES = "NoCompatibleInstanceTypes";
  // nodeclaim/lifecycle
  public static final String INSUFFICIENT_CAPACITY_ERROR = "InsufficientCapacityError";
  public static final String NODE_CLASS_NOT_READY = "NodeClassNotReady";
  // disruption
  public static final String DISRUPTION_TERMINATING = "DisruptionTerminating";
  public static final String DISRUPTION_BLOCKED = "DisruptionBlocked";
  public static final String UNCONSOLIDATABLE = "Unconsolidatable";
  public static final String CONSOLIDATION_APPROVED = "ConsolidationApproved";
  public static final String FAILED_CONSISTENCY_CHECK = "FailedConsistencyCheck";
  // node/termination
  public static final String EVICTED = "Evicted";
  public static final String DISRUPTED = "Disrupted";
  public static final String TERMINATION_GRACE_PERIOD_EXPIRING = "TerminationGracePeriodExpiring";
  // node/health
  public static final String NODE_REPAIR_BLOCKED = "NodeRepairBlocked";

  /** Upstream's PodNominationRateLimiter: 5 a second, bursts of 10, across all pods. */
  private static final Event.RateLimit NOMINATIONS = new Event.RateLimit(5, 10);

  private KarpenterEvents() {}

  public static Event nominated(Pod pod, NodeClaim claim, Node node) {
    StringBuilder on = new StringBuilder();
    if (claim != null) {
      on.append("nodeclaim/").append(claim.getMetadata().getName());
    }
    if (node != null) {
      on.append(on.length() > 0 ? ", " : "").append("node/").append(node.getMetadata().getName());
    }
    return new Event(
        pod,
        Event.NORMAL,
        NOMINATED,
        "Pod should schedule on: " + on,
        List.of(uid(pod)),
        Event.DEFAULT_DEDUPE,
        NOMINATIONS);
  }

  public static Event failedScheduling(Pod pod, String why) {
    return new Event(
        pod,
        Event.WARNING,
        FAILED_SCHEDULING,
        "Failed to schedule pod, " + why,
        List.of(uid(pod)),
        Duration.ofMinutes(5));
  }

  public static Event noCompatibleInstanceTypes(NodePool pool) {
    return new Event(
        pool,
        Event.WARNING,
        NO_COMPATIBLE_INSTANCE_TYPES,
        "NodePool requirements filtered out all compatible available instance types",
        List.of(uid(pool)),
        Duration.ofMinutes(1));
  }

  public static Event insufficientCapacity(NodeClaim claim, String why) {
    return new Event(
        claim,
        Event.WARNING,
        INSUFFICIENT_CAPACITY_ERROR,
        "NodeClaim " + claim.getMetadata().getName() + " event: " + why,
        List.of(uid(claim)),
        Event.DEFAULT_DEDUPE);
  }

  public static Event nodeClassNotReady(NodeClaim claim, String why) {
    return new Event(
        claim, Event.WARNING, NODE_CLASS_NOT_READY, why, List.of(uid(claim)), Event.DEFAULT_DEDUPE);
  }

  /** On the Node and on its NodeClaim: "Disrupting Node: Empty" and the like. */
  public static List<Event> disruptionTerminating(Node node, NodeClaim claim, String reason) {
    String why =
        reason.isEmpty() ? reason : Character.toUpperCase(reason.charAt(0)) + reason.substring(1);
    return onNodeAndClaim(
        node,
        claim,
        DISRUPTION_TERMINATING,
        "Disrupting Node: " + why,
        "Disrupting NodeClaim: " + why,
        reason,
        Event.DEFAULT_DEDUPE);
  }

  /** On the Node (if there is one) and its NodeClaim: why it is kept from consolidation. */
  public static List<Event> unconsolidatable(Node node, NodeClaim claim, String why) {
    return onNodeAndClaim(node, claim, UNCONSOLIDATABLE, why, why, null, Duration.ofMinutes(15));
  }

  /** Normal events on the Node (when there is one) and the NodeClaim, deduplicated by each. */
  private static List<Event> onNodeAndClaim(
      Node node,
      NodeClaim claim,
      String reason,
      String onNode,
      String onClaim,
      String dedupe,
      Duration timeout) {
    List<Event> events = new ArrayList<>();
    if (node != null) {
      events.add(new Event(node, Event.NORMAL, reason, onNode, dedupe(node, dedupe), timeout));
    }
    events.add(new Event(claim, Event.NORMAL, reason, onClaim, dedupe(claim, dedupe), timeout));
    return events;
  }

  private static List<String> dedupe(HasMetadata o, String value) {
    return value == null ? List.of(uid(o)) : List.of(uid(o), value);
  }

  /**
   * On the Node (if there is one) and its NodeClaim: a Balanced consolidation's score passed its
   * threshold.
   */
  public static List<Event> consolidationApproved(
      Node node,
      NodeClaim claim,
      double score,
      double threshold,
      int k,
      double savings,
      double disruption) {
    String why = consolidationScore(score, threshold, k, savings, disruption);
    return onNodeAndClaim(
        node, claim, CONSOLIDATION_APPROVED, why, why, null, Event.DEFAULT_DEDUPE);
  }

  /** On the NodePool: a multi-node Balanced consolidation's score for it passed its threshold. */
  public static Event consolidationApproved(
      NodePool pool, double score, double threshold, int k, double savings, double disruption) {
    return new Event(
        pool,
        Event.NORMAL,
        CONSOLIDATION_APPROVED,
        consolidationScore(score, threshold, k, savings, disruption),
        List.of(uid(pool)),
        Event.DEFAULT_DEDUPE);
  }

  /** Upstream's words, Go's formatting (an unbounded score is "+Inf"). */
  private static String consolidationScore(
      double score, double threshold, int k, double savings, double disruption) {
    return String.format(
        Locale.ROOT,
        "score %s >= threshold %.2f (k: %d, savings %.1f%%, disruption %.1f%%)",
        Double.isInfinite(score) ? "+Inf" : String.format(Locale.ROOT, "%.2f", score),
        threshold,
        k,
        savings * 100,
        disruption * 100);
  }

  /** On the NodeClaim: its Node is not what its launch promised ("expected 128Gi of …"). */
  public static Event failedConsistencyCheck(NodeClaim claim, String issue) {
    return new Event(
        claim,
        Event.WARNING,
        FAILED_CONSISTENCY_CHECK,
        issue,
        List.of(uid(claim), issue),
        Event.DEFAULT_DEDUPE);
  }

  /**
   * On the Node (if there is one) and its NodeClaim: why disruption leaves it be ("Pod has
   * "karpenter.sh/do-not-disrupt" annotation (Pod=default/web)" and the like), as upstream's.
   */
  public static List<Event> disruptionBlocked(Node node, NodeClaim claim, String why) {
    return onNodeAndClaim(node, claim, DISRUPTION_BLOCKED, why, why, null, Event.DEFAULT_DEDUPE);
  }

  public static Event disruptionBlocked(NodeClaim claim, String why) {
    return new Event(
        claim, Event.NORMAL, DISRUPTION_BLOCKED, why, List.of(uid(claim)), Event.DEFAULT_DEDUPE);
  }

  public static Event evicted(Pod pod, String reason) {
    return new Event(
        pod,
        Event.NORMAL,
        EVICTED,
        "Evicted pod: " + reason,
        List.of(pod.getMetadata().getName()),
        Event.DEFAULT_DEDUPE);
  }

  public static Event disrupted(Pod pod, String terminationTime) {
    return new Event(
        pod,
        Event.NORMAL,
        DISRUPTED,
        "Deleting the pod to accommodate the terminationTime "
            + terminationTime
            + " of the node. This bypasses the PDB of the pod and the do-not-disrupt annotation.",
        List.of(pod.getMetadata().getName()),
        Event.DEFAULT_DEDUPE);
  }

  public static Event terminationGracePeriodExpiring(NodeClaim claim, String terminationTime) {
    return new Event(
        claim,
        Event.WARNING,
        TERMINATION_GRACE_PERIOD_EXPIRING,
        "All pods will be deleted by " + terminationTime,
        List.of(claim.getMetadata().getName()),
        Event.DEFAULT_DEDUPE);
  }

  /**
   * On the unhealthy Node, once deduplicated by it, once by its NodeClaim and once by its NodePool
   * (none for a claim of no NodePool), as upstream: why it is not repaired now.
   */
  public static List<Event> nodeRepairBlocked(
      Node node, NodeClaim claim, NodePool pool, String why) {
    List<Event> events = new ArrayList<>();
    List<HasMetadata> dedupedBy = pool == null ? List.of(node, claim) : List.of(node, claim, pool);
    for (HasMetadata by : dedupedBy) {
      events.add(
          new Event(
              node,
              Event.WARNING,
              NODE_REPAIR_BLOCKED,
              why,
              List.of(uid(by)),
              Duration.ofMinutes(15)));
    }
    return events;
  }

  private static String uid(HasMetadata o) {
    return o.getMetadata().getUid() == null ? o.getMetadata().getName() : o.getMetadata().getUid();
  }
}
