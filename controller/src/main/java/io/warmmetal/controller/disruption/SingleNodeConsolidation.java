package io.warmmetal.controller.disruption;

import java.util.List;

/**
 * One underutilized node, as upstream's single-node consolidation: the least requested one whose
 * pods fit on the other nodes, or on one new node that costs less than it does. When none is found
 * the cluster is remembered as consolidated, and not simulated again until it changes.
 */
final class SingleNodeConsolidation extends Consolidation {
  SingleNodeConsolidation(LastFruitless lastFruitless) {
    super(lastFruitless);
  }

  @Override
  boolean consolidate(List<Candidate> candidates, NodePoolBudgets budgets, Pass pass, long deadline)
      throws Exception {
    for (Candidate candidate : candidates) {
      if (System.nanoTime() >= deadline) {
        return false; // the rest next pass: provisioning must not wait behind consolidation
      }
      List<Candidate> one = List.of(candidate);
      if (budgets.allows(one) && pass.start(compute(one, pass))) {
        return true;
      }
    }
    markConsolidated(pass);
    return false;
  }

  @Override
  public String consolidationType() {
    return "single";
  }
}
