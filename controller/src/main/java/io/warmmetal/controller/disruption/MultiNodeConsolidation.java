package io.warmmetal.controller.disruption;

import java.util.List;
import java.util.Map;

/**
 * Several underutilized nodes at once, as upstream's multi-node consolidation: the most of the
 * least requested ones (up to {@link #MAX}, at least two) whose pods fit on the other nodes and at
 * most one new, cheaper node, and whose move each Balanced NodePool among them approves — fewer
 * moves than taking them one by one.
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
    Command rejected = null;
    Map<String, Balanced.Score> rejectedScores = null;
    for (int k = Math.min(MAX, candidates.size()); k >= 2; k--) {
      if (System.nanoTime() >= deadline) {
        pass.timedOut(consolidationType());
        break;
      }
      List<Candidate> some = candidates.subList(0, k);
      Command command = budgets.allows(some) ? compute(some, pass) : null;
      if (command == null || replacesWithOwnType(command)) {
        continue;
      }
      Map<String, Balanced.Score> scores = pass.balanced().scores(command);
      if (!Balanced.approved(scores)) {
        rejected = command;
        rejectedScores = scores;
        continue;
      }
      if (pass.start(command)) {
        pass.balanced().judgedMulti(command, scores, true);
        return true;
      }
    }
    if (rejected != null) {
      // as upstream: the smallest window a Balanced NodePool turned down, counted once
      pass.balanced().judgedMulti(rejected, rejectedScores, false);
    }
    return false;
  }

  /**
   * Whether the command replaces its candidates by a new node of a type one of them already is:
   * deleting the others and keeping that one does as well with fewer pods moved (upstream's {@code
   * filterOutSameInstanceType}).
   */
  private static boolean replacesWithOwnType(Command command) {
    return command.replacements().stream()
        .anyMatch(
            r ->
                command.candidates().stream()
                    .anyMatch(c -> r.type().name().equals(c.instanceTypeName())));
  }

  @Override
  public String consolidationType() {
    return "multi";
  }
}
