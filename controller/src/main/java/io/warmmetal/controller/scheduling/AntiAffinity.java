package io.warmmetal.controller.scheduling;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Pod anti-affinity on topology keys other than the hostname (zones, regions, a rack label), across
 * the nodes of a plan: the pods placed, counted per domain (a node's value of the key) by the terms
 * that can keep a pod out — the pending pods' own terms (required and preferred) that select them,
 * and the required terms they hold, which Kubernetes checks in the other direction too. Counts
 * follow a new node's labels as its type narrows, so they always say where the pods are now.
 */
final class AntiAffinity {
  /** Per term of a pending pod: the placed pods it selects, per domain of its key. */
  private final Map<PodAffinityTerm, Map<String, Integer>> selected = new HashMap<>();

  /** Per required term of a pod: the placed pods that hold it, per domain of its key. */
  private final Map<PodAffinityTerm, Map<String, Integer>> held = new HashMap<>();

  /** Per required term of a pod: the placed pods that hold it, on any node. */
  private final Map<PodAffinityTerm, Integer> heldAnywhere = new HashMap<>();

  /** The keys the terms are on. */
  private final Set<String> keys = new HashSet<>();

  private PodRequest askedFor;
  private List<PodAffinityTerm> heldAgainst;

  /**
   * The counts for a plan of these pods over these nodes; null when no pod, to place or placed, has
   * anti-affinity held to on another key than the hostname (nothing to count).
   */
  static AntiAffinity over(
      Collection<PodRequest> pending,
      Collection<? extends OpenNode> nodes,
      Collection<? extends Topology.Node> bystanders) {
    List<Topology.Node> all = new ArrayList<>(nodes);
    all.addAll(bystanders);
    boolean needed =
        Stream.concat(pending.stream(), all.stream().flatMap(n -> n.pods().stream()))
            .anyMatch(
                p ->
                    p.allAntiAffinity().stream()
                        .anyMatch(t -> !t.topologyKey().equals(PodAffinityTerm.HOSTNAME)));
    return needed ? new AntiAffinity(pending, all) : null;
  }

  private AntiAffinity(Collection<PodRequest> pending, Collection<Topology.Node> nodes) {
    for (PodRequest pod : pending) {
      pod.antiAffinity().forEach(this::track);
      pod.placement().preferredAntiAffinity().forEach(this::track);
      pod.antiAffinity().forEach(this::trackHeld);
    }
    for (Topology.Node node : nodes) {
      node.pods().forEach(p -> p.antiAffinity().forEach(this::trackHeld));
    }
    for (Topology.Node node : nodes) {
      node.pods().forEach(p -> count(p, node.labels(), 1, true));
    }
  }

  private void track(PodAffinityTerm term) {
    if (!term.topologyKey().equals(PodAffinityTerm.HOSTNAME)) {
      selected.putIfAbsent(term, new HashMap<>());
      keys.add(term.topologyKey());
    }
  }

  private void trackHeld(PodAffinityTerm term) {
    if (!term.topologyKey().equals(PodAffinityTerm.HOSTNAME)) {
      held.putIfAbsent(term, new HashMap<>());
      heldAnywhere.putIfAbsent(term, 0);
      keys.add(term.topologyKey());
    }
  }

  /**
   * The pod was placed on {@code node}, whose labels were {@code before} (a new node's change as
   * its type narrows: the pods it had move with it).
   */
  void placed(PodRequest pod, OpenNode node, Map<String, String> before) {
    List<PodRequest> others = node.pods.subList(0, node.pods.size() - 1); // the pod is the last
    if (before != node.labels && !others.isEmpty() && moved(before, node.labels)) {
      for (PodRequest p : others) {
        count(p, before, -1, false);
        count(p, node.labels, 1, false);
      }
    }
    count(pod, node.labels, 1, true);
  }

  private boolean moved(Map<String, String> before, Map<String, String> after) {
    for (String key : keys) {
      if (!Objects.equals(before.get(key), after.get(key))) {
        return true;
      }
    }
    return false;
  }

  private void count(PodRequest pod, Map<String, String> labels, int delta, boolean arrived) {
    selected.forEach(
        (term, byDomain) -> {
          String domain = labels.get(term.topologyKey());
          if (domain != null && term.selects(pod)) {
            byDomain.merge(domain, delta, Integer::sum);
          }
        });
    for (PodAffinityTerm term : pod.antiAffinity()) {
      Map<String, Integer> byDomain = held.get(term);
      if (byDomain == null) {
        continue; // on the hostname
      }
      if (arrived) {
        heldAnywhere.merge(term, 1, Integer::sum);
      }
      String domain = labels.get(term.topologyKey());
      if (domain != null) {
        byDomain.merge(domain, delta, Integer::sum);
      }
    }
  }

  /** The required terms of pods (placed or to be) that select the pod. */
  private List<PodAffinityTerm> heldAgainst(PodRequest pod) {
    if (pod != askedFor) {
      heldAgainst = held.keySet().stream().filter(t -> t.selects(pod)).toList();
      askedFor = pod;
    }
    return heldAgainst;
  }

  /**
   * Whether a placed pod's required anti-affinity over zones or regions selects the pod: where it
   * goes matters.
   */
  boolean repelledOver(PodRequest pod, Set<String> keys) {
    for (PodAffinityTerm term : heldAgainst(pod)) {
      if (keys.contains(term.topologyKey()) && heldAnywhere.get(term) > 0) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether an anti-affinity term on a topology key other than the hostname keeps the pod off a
   * node with these labels: a node of the same domain (the same value of the key) holds a pod they
   * repel — one the pod's terms held to now select, or one whose required term selects the pod.
   * Nodes without the key are in no domain, as in Kubernetes.
   */
  boolean repelled(PodRequest pod, Map<String, String> labels) {
    for (PodAffinityTerm term : pod.allAntiAffinity()) {
      if (!term.topologyKey().equals(PodAffinityTerm.HOSTNAME)
          && inDomain(selected.get(term), labels, term)) {
        return true;
      }
    }
    for (PodAffinityTerm term : heldAgainst(pod)) {
      if (inDomain(held.get(term), labels, term)) {
        return true;
      }
    }
    return false;
  }

  private static boolean inDomain(
      Map<String, Integer> byDomain, Map<String, String> labels, PodAffinityTerm term) {
    String domain = labels.get(term.topologyKey());
    return domain != null && byDomain.getOrDefault(domain, 0) > 0;
  }
}
