package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Pod;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.VirtualPod;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.scheduling.TypeOverlay;
import io.warmmetal.controller.state.PodRequests;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * What-if scheduling over the cluster as one pass listed it, as upstream's SimulateScheduling: the
 * candidates gone, their pods placed on the other nodes (after the pods with no place now have
 * taken what they would) and, where needed, on new nodes. The capacity it plans against is made
 * once, when first needed (a pass that only deletes empty nodes never asks for it).
 */
final class Simulation {
  private final Scheduler scheduler;
  private final Capacity.Source source;
  private final List<NodeClaim> claims;
  private final List<Pod> pods;
  private final Map<String, List<Pod>> podsByNode;
  private Capacity capacity;

  /**
   * Where the pods with no place now would go (pending pods, and those on nodes being disrupted),
   * once.
   */
  private Map<PodRequest, Scheduler.PlannedNode> headed;

  /** Those of the pods with no place that are CapacityBuffers' virtual pods. */
  private final Set<PodRequest> virtual = Collections.newSetFromMap(new IdentityHashMap<>());

  /**
   * @param podsByNode the pods bound to each node that would have to move
   */
  Simulation(
      Scheduler scheduler,
      Capacity.Source source,
      List<NodeClaim> claims,
      List<Pod> pods,
      Map<String, List<Pod>> podsByNode) {
    this.scheduler = scheduler;
    this.source = source;
    this.claims = claims;
    this.pods = pods;
    this.podsByNode = podsByNode;
  }

  Capacity capacity() throws Exception {
    if (capacity == null) {
      capacity = source.of(claims, pods);
    }
    return capacity;
  }

  /** The pods bound to each node that would have to move. */
  Map<String, List<Pod>> podsByNode() {
    return podsByNode;
  }

  /**
   * Where the candidates' pods would go were the candidates gone: the plan, and what the candidates
   * cost together. Null if a candidate's shape or pool is gone from the capacity (nothing to reason
   * about).
   */
  record Result(Scheduler.Plan plan, double price) {}

  Result simulate(List<Candidate> candidates) throws Exception {
    Capacity capacity = capacity();
    if (candidates.stream().anyMatch(c -> capacity.nodes().get(c.claim()) == null)) {
      return null;
    }
    Set<String> names = new HashSet<>(candidates.stream().map(Candidate::name).toList());
    // The pods with no place now take theirs first: nothing is consolidated onto capacity they
    // would use. Those headed for a candidate need a place as much as its own pods do.
    Map<Scheduler.PlannedNode, NodeClaim> claimOf = claimsByNode();
    Map<PodRequest, Scheduler.PlannedNode> settled = new IdentityHashMap<>();
    List<PodRequest> moving = new ArrayList<>();
    headed()
        .forEach(
            (pod, node) -> {
              if (names.contains(claimOf.get(node).getMetadata().getName())) {
                moving.add(pod);
              } else {
                settled.put(pod, node);
              }
            });
    List<Scheduler.PlannedNode> others = absorb(destinations(names), settled);
    candidates.forEach(c -> c.pods().stream().map(capacity::request).forEach(moving::add));
    Scheduler.Plan plan =
        scheduler.schedule(
            moving, capacity.pools(), capacity.launchable(), others, capacity.bystanders());
    double price =
        candidates.stream().mapToDouble(c -> capacity.nodes().get(c.claim()).type().price()).sum();
    return new Result(plan, price);
  }

  /**
   * The NodeClaims whose nodes pods with no place now are headed for: upstream's nominated nodes. A
   * buffer's virtual pods nominate none, as upstream's: they are there every pass, and would keep
   * their nodes from drift and consolidation for good.
   */
  Set<String> nominated() throws Exception {
    return headedFor(pod -> !virtual.contains(pod));
  }

  /** The NodeClaims whose nodes CapacityBuffers' virtual pods are headed for. */
  Set<String> holdingBuffers() throws Exception {
    return headedFor(virtual::contains);
  }

  /**
   * What this simulation saw, for telling whether anything changed since: claims, pods and their
   * nodes, and the pools' NodeOverlays (upstream marks the cluster unconsolidated when they
   * change).
   */
  String fingerprint() {
    List<String> parts = new ArrayList<>();
    try {
      capacity().pools().stream()
          .filter(p -> p.overlay() != TypeOverlay.NONE)
          .forEach(p -> parts.add(p.name() + "~" + p.overlay()));
    } catch (Exception e) {
      parts.add("unknown: " + e); // no picture of the cluster: nothing is known unchanged
    }
    claims.forEach(
        c -> parts.add(c.getMetadata().getName() + "@" + c.getMetadata().getResourceVersion()));
    pods.forEach(
        p ->
            parts.add(
                p.getMetadata().getUid()
                    + ">"
                    + (p.getSpec() == null ? "" : p.getSpec().getNodeName())
                    + (p.getMetadata().getDeletionTimestamp() == null ? "" : "x")));
    parts.sort(null);
    return Integer.toHexString(parts.hashCode()) + ":" + parts.size();
  }

  boolean changedSince(String fingerprint) {
    return !fingerprint().equals(fingerprint);
  }

  /**
   * Pods that need a place: those pending, and those on nodes being deleted or replaced (they will
   * move), as upstream counts them — so the node they are headed for (a replacement up a moment
   * ago, say) is not taken away.
   */
  private Map<PodRequest, Scheduler.PlannedNode> headed() throws Exception {
    if (headed == null) {
      Capacity capacity = capacity();
      List<PodRequest> homeless = new ArrayList<>();
      pods.stream()
          .filter(PodRequests::unschedulable)
          .forEach(
              p -> {
                PodRequest request = capacity.request(p);
                homeless.add(request);
                if (VirtualPod.is(p)) {
                  virtual.add(request);
                }
              });
      for (NodeClaim c : claims) {
        if ((c.getMetadata().getDeletionTimestamp() != null || Commands.underway(c))
            && c.getStatus() != null) {
          podsByNode.getOrDefault(c.getStatus().nodeName, List.of()).stream()
              .map(capacity::request)
              .forEach(homeless::add);
        }
      }
      headed =
          homeless.isEmpty()
              ? Map.of()
              : scheduler
                  .schedule(homeless, capacity.pools(), List.of(), destinations(Set.of()))
                  .onExisting();
    }
    return headed;
  }

  private Set<String> headedFor(Predicate<PodRequest> which) throws Exception {
    if (headed().isEmpty()) {
      return Set.of();
    }
    Map<Scheduler.PlannedNode, NodeClaim> claimOf = claimsByNode();
    Set<String> names = new HashSet<>();
    headed()
        .forEach(
            (pod, node) -> {
              if (which.test(pod)) {
                names.add(claimOf.get(node).getMetadata().getName());
              }
            });
    return names;
  }

  private Map<Scheduler.PlannedNode, NodeClaim> claimsByNode() throws Exception {
    Map<Scheduler.PlannedNode, NodeClaim> claimOf = new IdentityHashMap<>();
    capacity().nodes().forEach((claim, node) -> claimOf.put(node, claim));
    return claimOf;
  }

  /**
   * Nodes pods may be moved to: initialized ones (a node not up yet may never be: upstream will not
   * count on one), not being replaced, not among {@code excluded}.
   */
  private List<Scheduler.PlannedNode> destinations(Set<String> excluded) throws Exception {
    List<Scheduler.PlannedNode> nodes = new ArrayList<>();
    capacity()
        .nodes()
        .forEach(
            (c, node) -> {
              if (!excluded.contains(c.getMetadata().getName())
                  && Candidate.initialized(c)
                  && !Commands.underway(c)) {
                nodes.add(node);
              }
            });
    return nodes;
  }

  /**
   * The nodes with the pending pods that would go there added: what is left for the pods being
   * moved. Each keeps its own taints (a cordon, say): the pending pods tolerate them, the pods
   * being moved may not.
   */
  private static List<Scheduler.PlannedNode> absorb(
      List<Scheduler.PlannedNode> nodes, Map<PodRequest, Scheduler.PlannedNode> placed) {
    Map<Scheduler.PlannedNode, List<PodRequest>> added = new IdentityHashMap<>();
    placed.forEach((pod, node) -> added.computeIfAbsent(node, n -> new ArrayList<>()).add(pod));
    return nodes.stream()
        .map(
            n -> {
              List<PodRequest> more = added.get(n);
              if (more == null) {
                return n;
              }
              List<PodRequest> all = new ArrayList<>(n.pods());
              all.addAll(more);
              Resources taken =
                  more.stream().map(PodRequest::requests).reduce(Resources.NONE, Resources::plus);
              return new Scheduler.PlannedNode(
                  n.pool(),
                  n.type(),
                  all,
                  n.free().minus(taken),
                  n.labels(),
                  n.taints(),
                  n.volumeLimits());
            })
        .toList();
  }
}
