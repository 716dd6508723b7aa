package io.warmmetal.controller.disruption;

import io.warmmetal.controller.karpenter.DoNotDisrupt;
import io.warmmetal.controller.karpenter.GoDuration;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.scheduling.Scheduler;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * What multi- and single-node consolidation share, as upstream's consolidation: which candidates
 * are underutilized, the order they are tried in (most saved per disruption first), what a
 * consolidation may plan (every pod placed, at most one new node, and that one cheaper than the
 * candidates), and the cluster as it was when consolidation last found nothing to do — an unchanged
 * cluster is not simulated again. Also whether a node's pods have been quiet for its pool's {@code
 * consolidateAfter} (upstream's Consolidatable condition), which emptiness uses too.
 */
abstract class Consolidation implements Method {
  static final String WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized";

  /** How long one pass may spend simulating consolidations (the rest waits for the next pass). */
  static final Duration BUDGET = Duration.ofSeconds(2);

  /**
   * The cluster as it was when consolidation last found nothing to do ({@link
   * Simulation#fingerprint}), one for multi- and single-node consolidation together: only
   * single-node, which runs last, finds that out.
   */
  static final class LastFruitless {
    private String fingerprint;
  }

  private final LastFruitless lastFruitless;

  Consolidation(LastFruitless lastFruitless) {
    this.lastFruitless = lastFruitless;
  }

  /**
   * Consolidatable, under {@code WhenEmptyOrUnderutilized} or {@code Balanced} (which {@link
   * Balanced} then scores), and not empty as emptiness sees it (an empty node holding a buffer's
   * room is one to consolidate: its room may move elsewhere).
   */
  @Override
  public final boolean shouldDisrupt(Candidate candidate, Pass pass) {
    String policy = policy(candidate.pool());
    return candidate.consolidatable()
        && !(candidate.empty() && !pass.holdsBuffer(candidate))
        && (WHEN_EMPTY_OR_UNDERUTILIZED.equals(policy) || Balanced.POLICY.equals(policy));
  }

  @Override
  public final String reason() {
    return "Underutilized";
  }

  @Override
  public final DisruptionClass disruptionClass() {
    return DisruptionClass.GRACEFUL;
  }

  @Override
  public final boolean computeCommands(
      List<Candidate> candidates, NodePoolBudgets budgets, Pass pass) throws Exception {
    if (consolidated(pass)) {
      return false; // nothing moved since consolidation last found nothing: it would find nothing
    }
    return consolidate(
        mostSavedPerDisruptionFirst(candidates, pass.balanced()),
        budgets,
        pass,
        pass.consolidationDeadline());
  }

  /**
   * Offers this consolidation's commands over the candidates (least requested first) until one is
   * started or {@code deadline} ({@link System#nanoTime}) passes; whether one was.
   */
  abstract boolean consolidate(
      List<Candidate> candidates, NodePoolBudgets budgets, Pass pass, long deadline)
      throws Exception;

  /** Whether nothing changed since consolidation last found nothing to do. */
  boolean consolidated(Pass pass) {
    return !pass.simulation().changedSince(lastFruitless.fingerprint);
  }

  /** Remembers the cluster as it is: consolidation found nothing to do in it. */
  void markConsolidated(Pass pass) {
    lastFruitless.fingerprint = pass.simulation().fingerprint();
  }

  /**
   * Upstream's order: the candidates that save the most per unit of disruption first (their price
   * over their disruption cost); of those alike, the least requested.
   */
  private static List<Candidate> mostSavedPerDisruptionFirst(
      List<Candidate> candidates, Balanced balanced) {
    List<Candidate> sorted = new ArrayList<>(candidates);
    sorted.sort(
        Comparator.comparingDouble((Candidate c) -> -balanced.savingsRatio(c))
            .thenComparingLong(Candidate::requestedCpu));
    return sorted;
  }

  /**
   * The command that consolidates the candidates, or null if there is none: their pods must all
   * find a place, on the nodes there are or on one new node that costs less than the candidates.
   */
  Command compute(List<Candidate> candidates, Pass pass) throws Exception {
    Simulation.Result result = pass.simulation().simulate(candidates);
    if (result == null
        || !result.plan().unschedulable().isEmpty()
        || result.plan().nodes().size() > 1) {
      return null;
    }
    List<Scheduler.PlannedNode> replacements = result.plan().nodes();
    if (!replacements.isEmpty()
        && replacements.stream().mapToDouble(n -> n.type().price()).sum() >= result.price()) {
      return null;
    }
    return new Command(this, candidates, replacements, result.price());
  }

  /**
   * Whether the claim's pods have been quiet for its pool's {@code consolidateAfter} ({@code
   * Never}: never; a static pool's, or one marked do-not-disrupt: never).
   */
  static boolean consolidatable(NodeClaim claim, NodePool pool, Instant now) {
    if (pool == null || DoNotDisrupt.marked(claim) || pool.isStatic()) {
      return false;
    }
    String after =
        pool.getSpec().disruption == null ? null : pool.getSpec().disruption.consolidateAfter;
    if ("Never".equals(after)) {
      return false;
    }
    if (claim.getStatus().lastPodEventTime == null) {
      return false; // not recorded yet: the clock has not started
    }
    Instant quietSince = Instant.parse(claim.getStatus().lastPodEventTime);
    Duration wait = GoDuration.parseOr(after, Duration.ZERO, null);
    return wait != null && !now.isBefore(quietSince.plus(wait));
  }

  /**
   * Why its NodePool has consolidation leave the candidate alone, in upstream's words:
   * consolidation disabled ({@code consolidateAfter: Never}), or a node that is not empty under
   * {@code WhenEmpty}; null if it does not (a static NodePool's nodes are left alone without a
   * word).
   */
  static String leftAlone(Candidate candidate) {
    NodePool pool = candidate.pool();
    if (pool.isStatic()) {
      return null;
    }
    String name = pool.getMetadata().getName();
    if (pool.getSpec().disruption != null
        && "Never".equals(pool.getSpec().disruption.consolidateAfter)) {
      return "NodePool \"" + name + "\" has consolidation disabled";
    }
    if (!candidate.empty() && "WhenEmpty".equals(policy(pool))) {
      return "NodePool \"" + name + "\" has consolidation policy WhenEmpty, but node is not empty";
    }
    return null;
  }

  static String policy(NodePool pool) {
    return pool.getSpec().disruption == null
            || pool.getSpec().disruption.consolidationPolicy == null
        ? WHEN_EMPTY_OR_UNDERUTILIZED
        : pool.getSpec().disruption.consolidationPolicy;
  }
}
