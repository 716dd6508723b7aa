package io.warmmetal.controller.disruption;

import java.util.List;

/**
 * Drifted nodes ({@link Drift} marks them), taken away as upstream's drift method takes them: one
 * at a time, within budgets, in the order the claims were listed — deleted where their pods fit on
 * the other nodes, else replaced first, at any price. Eventual: a claim with a {@code
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
    for (Candidate candidate : candidates) {
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
