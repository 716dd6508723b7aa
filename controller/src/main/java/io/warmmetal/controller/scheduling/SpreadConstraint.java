package io.warmmetal.controller.scheduling;

/**
 * A pod's topology spread constraint: the pods it counts (its selector, in the pod's namespace) per
 * domain of its topology key, at most {@code maxSkew} more in one domain than in the emptiest; with
 * {@code minDomains}, fewer domains than that count as an emptiest of zero. {@code required} is
 * {@code DoNotSchedule}; {@code ScheduleAnyway} is held to as well until relaxed, as upstream does.
 * Which nodes' domains count: with {@code honorNodeAffinity} (Kubernetes' default) only nodes the
 * pod's selector and affinity accept, with {@code honorTaints} only nodes whose taints it tolerates
 * (default: all).
 */
public record SpreadConstraint(
    PodAffinityTerm term,
    int maxSkew,
    Integer minDomains,
    boolean required,
    boolean honorNodeAffinity,
    boolean honorTaints) {

  public String topologyKey() {
    return term.topologyKey();
  }
}
