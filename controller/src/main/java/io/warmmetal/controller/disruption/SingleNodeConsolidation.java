package io.warmmetal.controller.disruption;

import java.util.List;
import java.util.Map;

/**
 * One underutilized node, as upstream's single-node consolidation: the first one (most saved per
 * disruption) whose pods fit on the other nodes, or on one new node that costs less than it does,
 * and whose move a Balanced NodePool's score approves. When none is found (and no budget held one
 * back) the cluster is remembered as consolidated, and not simulated again until it changes.
 */
final class SingleNodeConsolidation extends Consolidation {
  SingleNodeConsolidation(LastFruitless lastFruitless) {
    super(lastFruitless);
  }

  @Override
  boolean consolidate(List<Candidate> candidates, NodePoolBudgets budgets, Pass pass, long deadline)
      throws Exception {
    boolean heldByBudget = false;
    for (Candidate candidate : candidates) {
      if (System.nanoTime() >= deadline) {
        pass.timedOut(consolidationType());
        return false; // the rest next pass: provisioning must not wait behind consolidation
      }
      List<Candidate> one = List.of(candidate);
      if (!budgets.allows(one)) {
        heldByBudget = true;
        continue;
      }
      if (!pass.balanced().canPass(candidate)) {
        continue; // even deleting it would not pass its Balanced threshold
      }
      Command command = compute(one, pass);
      if (command == null) {
        continue;
      }
      Map<String, Balanced.Score> scores = pass.balanced().scores(command);
      pass.balanced().judgedSingle(candidate, scores);
      if (Balanced.approved(scores) && pass.start(command)) {
        return true;
      }
    }
    if (!heldByBudget) {
      // As upstream: nodes a budget held back are looked at again (the budget may open while
      // nothing else changes, a schedule's window say).
      markConsolidated(pass);
    }
    return false;
  }

  @Override
  public String consolidationType() {
    return "single";
  }
}
