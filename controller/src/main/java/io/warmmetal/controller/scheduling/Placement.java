package io.warmmetal.controller.scheduling;

import io.warmmetal.controller.karpenter.Requirement;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a pod wants to be, beyond its node selector, required node affinity and required
 * anti-affinity: its required pod affinity, its topology spread, and its preferences — preferred
 * pod affinity and anti-affinity terms and preferred node affinity terms, heaviest first. As
 * upstream's scheduler does, preferences are held to as if required (the heaviest node affinity
 * term only) and relaxed one at a time when the pod fits nowhere: preferred pod affinity, then
 * preferred anti-affinity, then preferred node affinity, then {@code ScheduleAnyway} spread.
 */
public record Placement(
    List<PodAffinityTerm> affinity,
    List<PodAffinityTerm> preferredAffinity,
    List<PodAffinityTerm> preferredAntiAffinity,
    List<List<Requirement>> preferredNodeTerms,
    List<SpreadConstraint> spread,
    boolean toleratesPreferNoSchedule) {
  public static final Placement NONE =
      new Placement(List.of(), List.of(), List.of(), List.of(), List.of());

  public Placement(
      List<PodAffinityTerm> affinity,
      List<PodAffinityTerm> preferredAffinity,
      List<PodAffinityTerm> preferredAntiAffinity,
      List<List<Requirement>> preferredNodeTerms,
      List<SpreadConstraint> spread) {
    this(affinity, preferredAffinity, preferredAntiAffinity, preferredNodeTerms, spread, false);
  }

  /** The same, but PreferNoSchedule taints tolerated: upstream's last relaxation. */
  public Placement toleratingPreferNoSchedule() {
    return new Placement(
        affinity, preferredAffinity, preferredAntiAffinity, preferredNodeTerms, spread, true);
  }

  /** Pod affinity terms held to now: the required ones and the preferred ones not relaxed yet. */
  public List<PodAffinityTerm> allAffinity() {
    if (preferredAffinity.isEmpty()) {
      return affinity;
    }
    List<PodAffinityTerm> all = new ArrayList<>(affinity);
    all.addAll(preferredAffinity);
    return all;
  }

  public boolean isEmpty() {
    return affinity.isEmpty()
        && preferredAffinity.isEmpty()
        && preferredAntiAffinity.isEmpty()
        && preferredNodeTerms.isEmpty()
        && spread.isEmpty();
  }

  /** One preference fewer, in upstream's order; null when there is nothing left to relax. */
  public Placement relax() {
    if (!preferredAffinity.isEmpty()) {
      return new Placement(
          affinity,
          rest(preferredAffinity),
          preferredAntiAffinity,
          preferredNodeTerms,
          spread,
          toleratesPreferNoSchedule);
    }
    if (!preferredAntiAffinity.isEmpty()) {
      return new Placement(
          affinity,
          preferredAffinity,
          rest(preferredAntiAffinity),
          preferredNodeTerms,
          spread,
          toleratesPreferNoSchedule);
    }
    if (!preferredNodeTerms.isEmpty()) {
      return new Placement(
          affinity,
          preferredAffinity,
          preferredAntiAffinity,
          rest(preferredNodeTerms),
          spread,
          toleratesPreferNoSchedule);
    }
    for (int i = 0; i < spread.size(); i++) {
      if (!spread.get(i).required()) {
        List<SpreadConstraint> kept = new ArrayList<>(spread);
        kept.remove(i);
        return new Placement(
            affinity,
            preferredAffinity,
            preferredAntiAffinity,
            preferredNodeTerms,
            kept,
            toleratesPreferNoSchedule);
      }
    }
    return null;
  }

  private static <T> List<T> rest(List<T> list) {
    return List.copyOf(list.subList(1, list.size()));
  }
}
