package io.warmmetal.controller.scheduling;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Pod counts per topology domain, for pod affinity and topology spread, as upstream's topology
 * groups keep them: one group per term (selector, namespaces, key) of the pods being planned,
 * counting the pods it selects on every node in the plan (those there and those planned) and on the
 * nodes pods are not planned onto (bystanders: nodes not ours), updated as pods are placed. A
 * node's domain for a key is its label's value — for {@code kubernetes.io/hostname}, the node
 * itself (a new node is a new, empty domain).
 */
final class Topology {
  /** A node as topology sees it: its identity (its hostname domain), its labels, its pods. */
  interface Node {
    String id();

    Map<String, String> labels();

    List<PodRequest> pods();

    boolean tolerates(PodRequest pod);
  }

  private final Map<PodAffinityTerm, Map<String, Integer>> counts = new HashMap<>();

  /**
   * Domains a new node could be in, by key (the zones and regions with machines to be had): empty
   * ones count.
   */
  private final Map<String, Set<String>> potential;

  /** Nodes pods are not planned onto: their pods and domains count all the same. */
  private final Collection<? extends Node> bystanders;

  Topology(
      Collection<PodRequest> pending,
      Collection<? extends Node> nodes,
      Collection<? extends Node> bystanders,
      Map<String, Set<String>> potential) {
    this.potential = potential;
    this.bystanders = bystanders;
    for (PodRequest pod : pending) {
      pod.placement().allAffinity().forEach(t -> counts.putIfAbsent(t, new HashMap<>()));
      pod.placement().spread().forEach(s -> counts.putIfAbsent(s.term(), new HashMap<>()));
    }
    for (Node node : nodes) {
      node.pods().forEach(p -> placed(p, node));
    }
    for (Node node : bystanders) {
      node.pods().forEach(p -> placed(p, node));
    }
  }

  boolean isEmpty() {
    return counts.isEmpty();
  }

  static String domain(Node node, String key) {
    return domain(node.id(), node.labels(), key);
  }

  private static String domain(String id, Map<String, String> labels, String key) {
    return key.equals(PodAffinityTerm.HOSTNAME) ? labels.getOrDefault(key, id) : labels.get(key);
  }

  void placed(PodRequest pod, Node node) {
    counts.forEach(
        (term, byDomain) -> {
          String domain = domain(node, term.topologyKey());
          if (domain != null && term.selects(pod)) {
            byDomain.merge(domain, 1, Integer::sum);
          }
        });
  }

  /**
   * How many pods the spread constraints of the pod that count in that domain of theirs already
   * count there.
   */
  int spreadCount(PodRequest pod, String key, String domain) {
    return pod.placement().spread().stream()
        .filter(s -> s.topologyKey().equals(key))
        .mapToInt(s -> counts.get(s.term()).getOrDefault(domain, 0))
        .sum();
  }

  /**
   * Whether a pod the affinity terms of the pod select is in that domain already (where the pod
   * wants to be).
   */
  boolean attracts(PodRequest pod, String key, String domain) {
    return pod.placement().allAffinity().stream()
        .anyMatch(t -> t.topologyKey().equals(key) && counts.get(t).getOrDefault(domain, 0) > 0);
  }

  /**
   * Whether the pod's affinity and spread allow it onto {@code node}, given every node of the plan.
   */
  boolean allows(PodRequest pod, Node node, Collection<? extends Node> nodes) {
    return allows(pod, node.id(), node.labels(), nodes);
  }

  /**
   * As {@link #allows(PodRequest, Node, Collection)}, for a node known by its id and labels (a new
   * node before it is made).
   */
  boolean allows(
      PodRequest pod, String id, Map<String, String> labels, Collection<? extends Node> nodes) {
    for (PodAffinityTerm term : pod.placement().allAffinity()) {
      String domain = domain(id, labels, term.topologyKey());
      Map<String, Integer> byDomain = counts.get(term);
      if (domain == null) {
        return false;
      }
      boolean anywhere = byDomain.values().stream().anyMatch(n -> n > 0);
      // With a matching pod somewhere, only its domains; with none anywhere, a pod its own term
      // selects starts one.
      if (anywhere ? byDomain.getOrDefault(domain, 0) == 0 : !term.selects(pod)) {
        return false;
      }
    }
    for (SpreadConstraint spread : pod.placement().spread()) {
      String domain = domain(id, labels, spread.topologyKey());
      if (domain == null) {
        return false; // a node without the key is in no domain: kube-scheduler will not place the
        // pod there
      }
      Map<String, Integer> byDomain = counts.get(spread.term());
      int count = byDomain.getOrDefault(domain, 0) + (spread.term().selects(pod) ? 1 : 0);
      if (count - minimum(pod, spread, byDomain, nodes) > spread.maxSkew()) {
        return false;
      }
    }
    return true;
  }

  /**
   * The emptiest eligible domain's count. For the hostname key zero: a new node can always be made.
   * Otherwise over the domains of the nodes the constraint's policies let count; fewer domains than
   * {@code minDomains} count as zero.
   */
  private int minimum(
      PodRequest pod,
      SpreadConstraint spread,
      Map<String, Integer> byDomain,
      Collection<? extends Node> nodes) {
    if (spread.topologyKey().equals(PodAffinityTerm.HOSTNAME)) {
      return 0;
    }
    Set<String> domains = new HashSet<>();
    addEligibleDomains(pod, spread, nodes, domains);
    addEligibleDomains(pod, spread, bystanders, domains);
    for (String d : potential.getOrDefault(spread.topologyKey(), Set.of())) {
      if (!spread.honorNodeAffinity() || pod.admits(spread.topologyKey(), d)) {
        domains.add(d); // a zone with machines to be had and no node yet: a domain of zero
      }
    }
    if (spread.minDomains() != null && domains.size() < spread.minDomains()) {
      return 0;
    }
    return domains.stream().mapToInt(d -> byDomain.getOrDefault(d, 0)).min().orElse(0);
  }

  /** The domains of those nodes the constraint's policies let count for the pod. */
  private static void addEligibleDomains(
      PodRequest pod,
      SpreadConstraint spread,
      Collection<? extends Node> nodes,
      Set<String> domains) {
    for (Node n : nodes) {
      String d = n.labels().get(spread.topologyKey());
      if (d != null
          && (!spread.honorNodeAffinity() || pod.accepts(n.labels()))
          && (!spread.honorTaints() || n.tolerates(pod))) {
        domains.add(d);
      }
    }
  }
}
