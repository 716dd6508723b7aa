package io.warmmetal.controller.disruption;

import io.warmmetal.controller.scheduling.Scheduler;
import java.util.List;

/**
 * What a method decided, as upstream's command: the candidates to take away, the new nodes that
 * replace them (none: their pods fit on the nodes there are), and what the replacements may cost at
 * most together (a consolidation must save: no fallback shape as dear as the candidates).
 */
record Command(
    Method method,
    List<Candidate> candidates,
    List<Scheduler.PlannedNode> replacements,
    double priceBelow) {

  /** A command that deletes the candidates: their pods fit on the nodes there are. */
  static Command delete(Method method, List<Candidate> candidates) {
    return new Command(method, candidates, List.of(), Double.MAX_VALUE);
  }

  /** Upstream's decision: delete, or replace (launch first, then delete). */
  String decision() {
    return replacements.isEmpty() ? "delete" : "replace";
  }
}
