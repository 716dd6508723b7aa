package io.warmmetal.controller.disruption;

import java.util.List;

/**
 * Several underutilized nodes at once, as upstream's multi-node consolidation: the most of the
 * least requested ones (up to {@link #MAX}, at least two) whose pods fit on the other nodes and at
 * most one new, cheaper node — fewer moves than taking them one by one.
 */
final class MultiNodeConsolidation extends Consolidation {
  /** Upstream's multi-node consolidation looks at up to this many nodes at once. */
  static final int MAX = 10;

  MultiNodeConsolidation(LastFruitless lastFruitless) {
    super(lastFruitless);
  }

  @Override
  boolean consolidate(List<Candidate> candidates, NodePoolBudgets budgets, Pass pass, long deadline)
      throws Exception {
    for (int k = Math.min(MAX, candidates.size()); k >= 2 && System.nanoTime() < deadline; k--) {
      List<Candidate> some = candidates.subList(0, k);
      if (budgets.allows(some) && pass.start(compute(some, pass))) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String consolidationType() {
    return "multi";
  }
}
