package io.warmmetal.controller.scheduling;

import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * What scheduling a pod needs: its requests, its nodeSelector, its required node affinity (any one
 * of the terms, each a list of requirements that must all hold), its tolerations, the host ports it
 * binds, for pod (anti-)affinity and spread its namespace, its labels and its own required
 * anti-affinity terms, and the rest of where it wants to be ({@link Placement}: pod affinity,
 * topology spread, preferences), and the volumes it mounts per CSI driver (the claims, {@code
 * namespace/name}, counted against a node's attach limits).
 */
public record PodRequest(
    String name,
    Resources requests,
    Map<String, String> nodeSelector,
    List<List<Requirement>> affinityTerms,
    List<Toleration> tolerations,
    List<HostPort> hostPorts,
    String namespace,
    Map<String, String> labels,
    List<PodAffinityTerm> antiAffinity,
    Placement placement,
    Map<String, Set<String>> volumes) {

  public PodRequest(
      String name,
      Resources requests,
      Map<String, String> nodeSelector,
      List<List<Requirement>> affinityTerms,
      List<Toleration> tolerations,
      List<HostPort> hostPorts,
      String namespace,
      Map<String, String> labels,
      List<PodAffinityTerm> antiAffinity,
      Placement placement) {
    this(
        name,
        requests,
        nodeSelector,
        affinityTerms,
        tolerations,
        hostPorts,
        namespace,
        labels,
        antiAffinity,
        placement,
        Map.of());
  }

  public PodRequest(
      String name,
      Resources requests,
      Map<String, String> nodeSelector,
      List<List<Requirement>> affinityTerms,
      List<Toleration> tolerations) {
    this(
        name,
        requests,
        nodeSelector,
        affinityTerms,
        tolerations,
        List.of(),
        "default",
        Map.of(),
        List.of(),
        Placement.NONE);
  }

  public PodRequest withHostPorts(List<HostPort> ports) {
    return new PodRequest(
        name,
        requests,
        nodeSelector,
        affinityTerms,
        tolerations,
        ports,
        namespace,
        labels,
        antiAffinity,
        placement,
        volumes);
  }

  public PodRequest withIdentity(String namespace, Map<String, String> labels) {
    return new PodRequest(
        name,
        requests,
        nodeSelector,
        affinityTerms,
        tolerations,
        hostPorts,
        namespace,
        labels,
        antiAffinity,
        placement,
        volumes);
  }

  public PodRequest withAntiAffinity(List<PodAffinityTerm> terms) {
    return new PodRequest(
        name,
        requests,
        nodeSelector,
        affinityTerms,
        tolerations,
        hostPorts,
        namespace,
        labels,
        terms,
        placement,
        volumes);
  }

  public PodRequest withPlacement(Placement placement) {
    return new PodRequest(
        name,
        requests,
        nodeSelector,
        affinityTerms,
        tolerations,
        hostPorts,
        namespace,
        labels,
        antiAffinity,
        placement,
        volumes);
  }

  /** The pod mounting these volumes: claims ({@code namespace/name}) per CSI driver. */
  public PodRequest withVolumes(Map<String, Set<String>> volumes) {
    return new PodRequest(
        name,
        requests,
        nodeSelector,
        affinityTerms,
        tolerations,
        hostPorts,
        namespace,
        labels,
        antiAffinity,
        placement,
        volumes);
  }

  /**
   * The pod with one preference fewer ({@link Placement#relax}), and last — where {@code
   * preferNoSchedule} taints are about — PreferNoSchedule taints tolerated; null when nothing is
   * left to relax.
   */
  public PodRequest relaxed(boolean preferNoSchedule) {
    Placement less = placement.relax();
    if (less == null && preferNoSchedule && !placement.toleratesPreferNoSchedule()) {
      less = placement.toleratingPreferNoSchedule();
    }
    return less == null ? null : withPlacement(less);
  }

  /** Anti-affinity terms held to now: the required ones and the preferred ones not relaxed yet. */
  public List<PodAffinityTerm> allAntiAffinity() {
    if (placement.preferredAntiAffinity().isEmpty()) {
      return antiAffinity;
    }
    List<PodAffinityTerm> all = new ArrayList<>(antiAffinity);
    all.addAll(placement.preferredAntiAffinity());
    return all;
  }

  /**
   * Whether the two may not share a topology domain of {@code key} (a node, for the hostname key):
   * an anti-affinity term of this pod held to now, or a required one of the other, on that key,
   * selects the other — Kubernetes checks both directions (the other's preferences are its own
   * business, as kube-scheduler's).
   */
  public boolean repels(PodRequest other, String key) {
    return allAntiAffinity().stream().anyMatch(t -> t.topologyKey().equals(key) && t.selects(other))
        || other.antiAffinity.stream()
            .anyMatch(t -> t.topologyKey().equals(key) && t.selects(this));
  }

  /** Whether the two cannot share a node: a host port of one is a host port of the other. */
  public boolean portsConflictWith(PodRequest other) {
    return hostPorts.stream().anyMatch(p -> other.hostPorts.stream().anyMatch(p::conflictsWith));
  }

  /**
   * Whether the pod's selector and affinity allow {@code value} for {@code key}, whatever the other
   * labels: its selector does not name another value, and some affinity term's requirements on that
   * key hold.
   */
  public boolean admits(String key, String value) {
    String wanted = nodeSelector.get(key);
    if (wanted != null && !wanted.equals(value)) {
      return false;
    }
    Predicate<List<Requirement>> ok =
        term ->
            term.stream()
                .filter(r -> r.getKey().equals(key))
                .allMatch(r -> r.matches(Map.of(key, value)));
    if (!placement.preferredNodeTerms().isEmpty()
        && !ok.test(placement.preferredNodeTerms().get(0))) {
      return false;
    }
    return affinityTerms.isEmpty() || affinityTerms.stream().anyMatch(ok);
  }

  /**
   * Whether anything of the pod's is about one of these node label keys: selector, affinity,
   * spread, pod terms.
   */
  /**
   * Upstream's effective zone of a pending pod, from its required node selection (its volumes'
   * zones among it): the one zone it may go to, {@code flexible} (several, or it names none), or
   * {@code none} (what it asks for leaves no zone).
   */
  public String effectiveZone() {
    String key = WellKnown.ZONE_LABEL;
    Set<String> named = new TreeSet<>();
    if (nodeSelector.containsKey(key)) {
      named.add(nodeSelector.get(key));
    } else if (affinityTerms.isEmpty()) {
      return "flexible";
    } else {
      for (List<Requirement> term : affinityTerms) {
        List<Requirement> in =
            term.stream()
                .filter(r -> key.equals(r.getKey()) && "In".equals(r.getOperator()))
                .toList();
        if (in.isEmpty()) {
          return "flexible"; // a term that names no zone allows any
        }
        in.forEach(r -> named.addAll(r.getValues()));
      }
    }
    List<String> allowed =
        named.stream()
            .filter(
                zone ->
                    (!nodeSelector.containsKey(key) || nodeSelector.get(key).equals(zone))
                        && (affinityTerms.isEmpty()
                            || affinityTerms.stream()
                                .anyMatch(
                                    term ->
                                        term.stream()
                                            .filter(r -> key.equals(r.getKey()))
                                            .allMatch(r -> r.matches(Map.of(key, zone))))))
            .toList();
    if (allowed.size() == 1) {
      return allowed.get(0);
    }
    return allowed.isEmpty() ? "none" : "flexible";
  }

  public boolean mentions(Set<String> keys) {
    if (nodeSelector.keySet().stream().anyMatch(keys::contains)
        || affinityTerms.stream().flatMap(List::stream).anyMatch(r -> keys.contains(r.getKey()))
        || placement.preferredNodeTerms().stream()
            .flatMap(List::stream)
            .anyMatch(r -> keys.contains(r.getKey()))
        || placement.spread().stream().anyMatch(s -> keys.contains(s.topologyKey()))
        || placement.allAffinity().stream().anyMatch(t -> keys.contains(t.topologyKey()))) {
      return true;
    }
    return allAntiAffinity().stream().anyMatch(t -> keys.contains(t.topologyKey()));
  }

  /** Whether a node with these labels satisfies the pod's selector and affinity. */
  public boolean accepts(Map<String, String> labels) {
    for (Map.Entry<String, String> s : nodeSelector.entrySet()) {
      if (!s.getValue().equals(labels.get(s.getKey()))) {
        return false;
      }
    }
    if (!placement.preferredNodeTerms().isEmpty()
        && !placement.preferredNodeTerms().get(0).stream().allMatch(r -> r.matches(labels))) {
      return false; // the heaviest preferred term, held to until relaxed
    }
    if (affinityTerms.isEmpty()) {
      return true;
    }
    return affinityTerms.stream().anyMatch(term -> term.stream().allMatch(r -> r.matches(labels)));
  }

  /**
   * Whether the pod tolerates the taints: every NoSchedule and NoExecute one, and — until relaxed,
   * as upstream holds them — every PreferNoSchedule one.
   */
  public boolean tolerates(List<Taint> taints) {
    for (var taint : taints) {
      if ("PreferNoSchedule".equals(taint.getEffect()) && placement.toleratesPreferNoSchedule()) {
        continue;
      }
      boolean tolerated = tolerations.stream().anyMatch(t -> tolerates(t, taint));
      if (!tolerated) {
        return false;
      }
    }
    return true;
  }

  private static boolean tolerates(Toleration t, Taint taint) {
    if (t.getEffect() != null
        && !t.getEffect().isEmpty()
        && !t.getEffect().equals(taint.getEffect())) {
      return false;
    }
    if (t.getKey() == null || t.getKey().isEmpty()) {
      return "Exists".equals(t.getOperator()); // an empty key with Exists tolerates everything
    }
    if (!t.getKey().equals(taint.getKey())) {
      return false;
    }
    return "Exists".equals(t.getOperator()) || Objects.equals(t.getValue(), taint.getValue());
  }
}
