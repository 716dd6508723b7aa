package io.warmmetal.controller.disruption;

import io.warmmetal.controller.events.KarpenterEvents;
import io.warmmetal.controller.events.Recorder;
import java.util.List;

/**
 * Empty nodes, as upstream's emptiness: every consolidatable node with no pod to move, under either
 * consolidation policy, deleted at once as far as its pool's budget allows. A node CapacityBuffers'
 * virtual pods would go to holds their room and is not empty (said, as upstream says it).
 */
final class Emptiness implements Method {
  private final Recorder events;

  Emptiness(Recorder events) {
    this.events = events;
  }

  @Override
  public boolean shouldDisrupt(Candidate candidate, Pass pass) {
    if (!candidate.consolidatable() || !candidate.empty()) {
      return false;
    }
    if (pass.holdsBuffer(candidate)) {
      events.publish(
          KarpenterEvents.unconsolidatable(
              candidate.node(),
              candidate.claim(),
              "Node \"" + candidate.nodeName() + "\" has buffer pods"));
      return false;
    }
    return true;
  }

  @Override
  public boolean computeCommands(List<Candidate> candidates, NodePoolBudgets budgets, Pass pass)
      throws Exception {
    boolean emptied = false;
    for (Candidate candidate : candidates) {
      List<Candidate> one = List.of(candidate);
      if (budgets.take(one)) {
        emptied |= pass.start(Command.delete(this, one));
      }
    }
    return emptied;
  }

  @Override
  public String reason() {
    return "Empty";
  }

  @Override
  public DisruptionClass disruptionClass() {
    return DisruptionClass.GRACEFUL;
  }

  @Override
  public String consolidationType() {
    return "empty";
  }
}
