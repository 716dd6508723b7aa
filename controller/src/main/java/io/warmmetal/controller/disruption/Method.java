package io.warmmetal.controller.disruption;

import java.util.List;

/**
 * One way of taking nodes away, as upstream's disruption methods: which candidates it may take
 * ({@link #shouldDisrupt}) and the commands that would take them ({@link #computeCommands}). {@link
 * Disruption} walks its methods in order each pass; the first that starts a command ends the pass.
 */
interface Method {
  /**
   * Upstream's disruption classes: a graceful method takes only nodes whose pods their
   * PodDisruptionBudgets let go now; an eventual one also those whose {@code
   * terminationGracePeriod} ends the drain whatever the budgets say.
   */
  enum DisruptionClass {
    GRACEFUL,
    EVENTUAL
  }

  /** Whether this method may take the candidate, before budgets and simulation. */
  boolean shouldDisrupt(Candidate candidate, Pass pass);

  /**
   * Works out this method's commands over its candidates, best first, within the budgets, and
   * offers each to {@link Pass#start} until one is started (one whose replacement cannot be
   * launched now is not: the next is tried). Returns whether one was.
   */
  boolean computeCommands(List<Candidate> candidates, NodePoolBudgets budgets, Pass pass)
      throws Exception;

  /** The disruption reason budgets, metrics and events name: Drifted, Empty or Underutilized. */
  String reason();

  DisruptionClass disruptionClass();

  /** The consolidation type metrics name: empty, multi, single, or none (""). */
  String consolidationType();
}
