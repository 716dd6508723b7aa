package io.warmmetal.controller.disruption;

import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import java.util.Set;

/**
 * One disruption pass as its methods see it: the simulation over the cluster as the pass listed it,
 * the nodes CapacityBuffers' virtual pods would go to, how a command is started, and how long
 * consolidation may still simulate.
 */
final class Pass {
  /** Carries a command out; false if it cannot be now (no machine for a replacement, say). */
  @FunctionalInterface
  interface Starter {
    boolean start(Command command) throws Exception;
  }

  private final Simulation simulation;
  private final Set<String> holdingBuffers;
  private final Starter starter;
  private final KarpenterMetrics metrics;
  private final Recorder events;
  private Balanced balanced;
  private long consolidationDeadline;
  private boolean consolidating;

  /**
   * @param holdingBuffers the NodeClaims whose nodes CapacityBuffers' virtual pods are headed for
   */
  Pass(Simulation simulation, Set<String> holdingBuffers, Starter starter) {
    this(simulation, holdingBuffers, starter, null, null);
  }

  /**
   * @param metrics where consolidation moves and Balanced scores are counted (null: nowhere)
   * @param events where approved Balanced moves are told (null: nowhere)
   */
  Pass(
      Simulation simulation,
      Set<String> holdingBuffers,
      Starter starter,
      KarpenterMetrics metrics,
      Recorder events) {
    this.simulation = simulation;
    this.holdingBuffers = holdingBuffers;
    this.starter = starter;
    this.metrics = metrics;
    this.events = events;
  }

  /** The NodePools' costs and disruption, for Balanced consolidation: worked out once a pass. */
  Balanced balanced() throws Exception {
    if (balanced == null) {
      balanced =
          Balanced.of(simulation.capacity().nodes(), simulation.podsByNode(), metrics, events);
    }
    return balanced;
  }

  Simulation simulation() {
    return simulation;
  }

  /**
   * Whether a buffer's virtual pods would go to the candidate's node: it holds the buffer's room,
   * so it is not empty as upstream's emptiness sees it.
   */
  boolean holdsBuffer(Candidate candidate) {
    return holdingBuffers.contains(candidate.name());
  }

  /** A consolidation of the type ran out of this pass's time ({@link #consolidationDeadline}). */
  void timedOut(String consolidationType) {
    if (metrics != null) {
      metrics.consolidationTimedOut(consolidationType);
    }
  }

  /** Starts the command (null: none); whether it was. */
  boolean start(Command command) throws Exception {
    return command != null && starter.start(command);
  }

  /**
   * The {@link System#nanoTime} by which consolidation stops simulating in this pass: {@link
   * Consolidation#BUDGET} after it first asks (the rest waits for the next pass).
   */
  long consolidationDeadline() {
    if (!consolidating) {
      consolidating = true;
      consolidationDeadline = System.nanoTime() + Consolidation.BUDGET.toNanos();
    }
    return consolidationDeadline;
  }
}
