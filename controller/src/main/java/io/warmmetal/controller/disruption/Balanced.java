package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Pod;
import io.warmmetal.controller.events.KarpenterEvents;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.scheduling.Scheduler;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Upstream's {@code Balanced} consolidation policy: a move is made only when what it saves, as a
 * share of its NodePool's cost, is at least half ({@code 1/k}, {@code k = 2}) of what it disrupts,
 * as a share of the NodePool's disruption. A node's disruption is 1 (draining it at all) plus each
 * pod's eviction cost (1, moved by its {@code controller.kubernetes.io/pod-deletion-cost} and
 * priority, clamped to [-10, 10]; a negative one counts as 0). Moves of other policies pass; every
 * single-node move and every multi-node move is counted ({@code
 * karpenter_consolidation_moves_total}), Balanced ones with their score ({@code
 * karpenter_consolidation_score}) and, approved, a {@code ConsolidationApproved} event. Made once a
 * pass, over the NodeClaims there are.
 */
final class Balanced {
  static final String POLICY = "Balanced";

  /** Upstream's {@code BalancedK}: a move passes at a score of {@code 1/k}. */
  static final int K = 2;

  /** What draining a node costs before its pods: cordon, drain, replacement. */
  static final double PER_NODE = 1.0;

  /** A NodePool's nodes: their cost, and their disruption cost, summed. */
  record Totals(double cost, double disruption) {}

  /** A move's savings and disruption, each as a share of its NodePool's. */
  record Score(double savingsFraction, double disruptionFraction) {
    double value() {
      if (savingsFraction <= 0) {
        return 0;
      }
      return disruptionFraction == 0
          ? Double.POSITIVE_INFINITY
          : savingsFraction / disruptionFraction;
    }

    static double threshold() {
      return 1.0 / K;
    }

    boolean approved() {
      return value() >= threshold();
    }
  }

  private final Map<String, Totals> totals;
  private final Map<NodeClaim, Scheduler.PlannedNode> nodes;

  /** Where moves are counted and approvals told; null in the methods' unit tests. */
  private final KarpenterMetrics metrics;

  private final Recorder events;

  private Balanced(
      Map<String, Totals> totals,
      Map<NodeClaim, Scheduler.PlannedNode> nodes,
      KarpenterMetrics metrics,
      Recorder events) {
    this.totals = totals;
    this.nodes = nodes;
    this.metrics = metrics;
    this.events = events;
  }

  /**
   * The totals of each NodePool over its NodeClaims' nodes ({@code nodes}: their types' prices;
   * {@code podsByNode}: the pods each would have to move).
   */
  static Balanced of(
      Map<NodeClaim, Scheduler.PlannedNode> nodes,
      Map<String, List<Pod>> podsByNode,
      KarpenterMetrics metrics,
      Recorder events) {
    Map<String, Totals> totals = new HashMap<>();
    nodes.forEach(
        (claim, node) -> {
          String nodeName = claim.getStatus() == null ? null : claim.getStatus().nodeName;
          double disruption =
              disruptionCost(
                  nodeName == null ? List.of() : podsByNode.getOrDefault(nodeName, List.of()));
          totals.merge(
              Candidate.poolOf(claim),
              new Totals(node.type().price(), disruption),
              (a, b) -> new Totals(a.cost() + b.cost(), a.disruption() + b.disruption()));
        });
    return new Balanced(totals, nodes, metrics, events);
  }

  /** Upstream's reschedule disruption cost: 1, and each pod's positive eviction cost. */
  static double disruptionCost(List<Pod> pods) {
    double cost = PER_NODE;
    for (Pod pod : pods) {
      cost += Math.max(0, evictionCost(pod));
    }
    return cost;
  }

  /**
   * Upstream's eviction cost of a pod: 1, plus its pod-deletion cost over 2^27, plus its priority
   * over 2^25, clamped to [-10, 10] (an unparsable deletion cost is left out).
   */
  static double evictionCost(Pod pod) {
    double cost = 1.0;
    Map<String, String> annotations = pod.getMetadata().getAnnotations();
    String deletionCost =
        annotations == null ? null : annotations.get("controller.kubernetes.io/pod-deletion-cost");
    if (deletionCost != null) {
      try {
        cost += Double.parseDouble(deletionCost) / Math.pow(2, 27);
      } catch (NumberFormatException unparsable) {
        // as upstream: logged there, left out here
      }
    }
    if (pod.getSpec() != null && pod.getSpec().getPriority() != null) {
      cost += pod.getSpec().getPriority() / Math.pow(2, 25);
    }
    return Math.max(-10.0, Math.min(10.0, cost));
  }

  /** What the candidate's node costs (0 if its type is gone from the picture). */
  double price(Candidate candidate) {
    Scheduler.PlannedNode node = nodes.get(candidate.claim());
    return node == null ? 0 : node.type().price();
  }

  /** Upstream's order: the most saved per unit of disruption first. */
  double savingsRatio(Candidate candidate) {
    return price(candidate) / disruptionCost(candidate.pods());
  }

  /**
   * Whether even deleting the candidate outright (the best any move of it can do) would pass its
   * NodePool's threshold: if not, no move of it is simulated. Other policies' candidates pass.
   */
  boolean canPass(Candidate candidate) {
    if (!POLICY.equals(Consolidation.policy(candidate.pool()))) {
      return true;
    }
    Totals pool = totals.get(candidate.poolName());
    if (pool == null || pool.cost() <= 0) {
      return true;
    }
    return score(price(candidate), disruptionCost(candidate.pods()), pool).approved();
  }

  /**
   * Each Balanced NodePool's score of the move (the move's net savings shared among the NodePools
   * by what their candidates cost); none for NodePools of other policies.
   */
  Map<String, Score> scores(Command command) {
    Map<String, List<Candidate>> byPool = new LinkedHashMap<>();
    command
        .candidates()
        .forEach(c -> byPool.computeIfAbsent(c.poolName(), p -> new ArrayList<>()).add(c));
    double sourceCost = command.candidates().stream().mapToDouble(this::price).sum();
    double replacementCost =
        command.replacements().stream().mapToDouble(n -> n.type().price()).sum();
    double savings = sourceCost - replacementCost;
    Map<String, Score> scores = new LinkedHashMap<>();
    byPool.forEach(
        (pool, candidates) -> {
          if (!POLICY.equals(Consolidation.policy(candidates.get(0).pool()))) {
            return;
          }
          double poolCost = candidates.stream().mapToDouble(this::price).sum();
          double poolSavings =
              sourceCost > 0 && byPool.size() > 1 ? savings * poolCost / sourceCost : savings;
          double disruption = candidates.stream().mapToDouble(c -> disruptionCost(c.pods())).sum();
          scores.put(pool, score(poolSavings, disruption, totals.get(pool)));
        });
    return scores;
  }

  static Score score(double savings, double disruption, Totals pool) {
    if (pool == null || pool.cost() <= 0 || pool.disruption() <= 0) {
      return new Score(0, 0);
    }
    return new Score(savings / pool.cost(), disruption / pool.disruption());
  }

  /** Whether every Balanced NodePool of the move approves it. */
  static boolean approved(Map<String, Score> scores) {
    return scores.values().stream().allMatch(Score::approved);
  }

  /**
   * Counts a single-node move judged (every policy's) and the score of a Balanced one; tells the
   * node and its claim when it passed.
   */
  void judgedSingle(Candidate candidate, Map<String, Score> scores) {
    Score score = scores.get(candidate.poolName());
    String policy = Consolidation.policy(candidate.pool());
    String decision = score == null || score.approved() ? "approved" : "rejected";
    if (metrics == null) {
      return; // a pass of the methods' unit tests
    }
    metrics.consolidationMove(decision, candidate.poolName(), policy);
    if (score == null) {
      return;
    }
    metrics.consolidationScore(decision, candidate.poolName(), policy, score.value());
    if (score.approved()) {
      events.publish(
          KarpenterEvents.consolidationApproved(
              candidate.node(),
              candidate.claim(),
              score.value(),
              Score.threshold(),
              K,
              score.savingsFraction(),
              score.disruptionFraction()));
    }
  }

  /**
   * Counts a multi-node move judged, once per NodePool of its candidates, with each Balanced one's
   * own score; tells each Balanced NodePool that approved it.
   */
  void judgedMulti(Command command, Map<String, Score> scores, boolean approved) {
    if (metrics == null) {
      return; // a pass of the methods' unit tests
    }
    Map<String, NodePool> pools = new LinkedHashMap<>();
    command.candidates().forEach(c -> pools.putIfAbsent(c.poolName(), c.pool()));
    pools.forEach(
        (name, pool) -> {
          String policy = Consolidation.policy(pool);
          metrics.consolidationMove(approved ? "approved" : "rejected", name, policy);
          Score score = scores.get(name);
          if (score == null) {
            return;
          }
          metrics.consolidationScore(
              score.approved() ? "approved" : "rejected", name, policy, score.value());
          if (score.approved()) {
            events.publish(
                KarpenterEvents.consolidationApproved(
                    pool,
                    score.value(),
                    Score.threshold(),
                    K,
                    score.savingsFraction(),
                    score.disruptionFraction()));
          }
        });
  }
}
