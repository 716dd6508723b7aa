package io.warmmetal.controller.disruption;

import io.warmmetal.controller.karpenter.Conditions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Drifted nodes ({@link Drift} marks them), taken away as upstream's drift method takes them: one
 * at a time, within budgets, empty ones first, then the earliest drifted — deleted where their pods
 * fit on the other nodes, else replaced first, at any price. Eventual: a claim with a {@code
 * terminationGracePeriod} goes even if a PodDisruptionBudget holds its pods now.
 */
final class DriftMethod implements Method {
  @Override
  public boolean shouldDisrupt(Candidate candidate, Pass pass) {
    return candidate.drifted();
  }

  @Override
  public boolean computeCommands(List<Candidate> candidates, NodePoolBudgets budgets, Pass pass)
      throws Exception {
    for (Candidate candidate : emptyThenEarliestDrifted(candidates)) {
      List<Candidate> one = List.of(candidate);
      if (!budgets.allows(one)) {
        continue;
      }
      Simulation.Result result = pass.simulation().simulate(one);
      if (result != null
          && result.plan().unschedulable().isEmpty()
          && pass.start(new Command(this, one, result.plan().nodes(), Double.MAX_VALUE))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Upstream's order: empty nodes first (their pods would not move twice, and a tight budget goes
   * to them), each kind by when it drifted, the earliest first.
   */
  private static List<Candidate> emptyThenEarliestDrifted(List<Candidate> candidates) {
    List<Candidate> sorted = new ArrayList<>(candidates);
    sorted.sort(
        Comparator.comparing((Candidate c) -> !c.empty())
            .thenComparing(
                DriftMethod::driftedAt, Comparator.nullsLast(Comparator.naturalOrder())));
    return sorted;
  }

  private static Instant driftedAt(Candidate candidate) {
    var drifted = Conditions.get(candidate.claim().getStatus().conditions, Conditions.DRIFTED);
    try {
      return drifted == null ? null : Instant.parse(drifted.getLastTransitionTime());
    } catch (RuntimeException unreadable) {
      return null; // none or unreadable: after those that say when
    }
  }

  @Override
  public String reason() {
    return "Drifted";
  }

  @Override
  public DisruptionClass disruptionClass() {
    return DisruptionClass.EVENTUAL;
  }

  @Override
  public String consolidationType() {
    return "";
  }
}
