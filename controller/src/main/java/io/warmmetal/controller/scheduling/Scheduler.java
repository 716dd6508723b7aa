package io.warmmetal.controller.scheduling;

import io.fabric8.kubernetes.api.model.Taint;
import io.warmmetal.controller.karpenter.WellKnown;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decides which nodes to launch for pending pods, as Karpenter's provisioner does: pods largest
 * first, each onto a node already planned if one fits and suits it (first fit), else onto a new
 * node of the best (NodePool, instance type) pair that suits it — heaviest NodePool first, then
 * instance types with warm machines, then the cheapest — within the NodePool's limits (resources
 * and {@code nodes}) and its requirements' {@code minValues}. What every node gives up before pods
 * arrive: a fixed reserve, and the DaemonSets that would land on a node of that pool and type. Pods
 * count as the {@code pods} resource, so a type's pods-per-node is its own.
 *
 * <p>It holds what is fixed between calls (the reserve); each call is a {@link Solve}, which holds
 * that call's pods, pools, instance types and the plan it builds.
 */
public final class Scheduler {
  /** The node label keys whose values a new node's machine decides: its zone and region. */
  static final Set<String> TOPOLOGY_KEYS = Set.of(WellKnown.ZONE_LABEL, WellKnown.REGION_LABEL);

  private final Resources reserve;
  private final boolean minValuesBestEffort;

  /**
   * @param reserve what every node gives up besides its DaemonSets (system daemons that are not
   *     pods, say)
   */
  public Scheduler(Resources reserve) {
    this(reserve, false);
  }

  /**
   * @param minValuesBestEffort upstream's {@code --min-values-policy=BestEffort}: a node whose
   *     pool's {@code minValues} its types cannot meet is still planned (its claim says so), rather
   *     than the pool left out
   */
  public Scheduler(Resources reserve, boolean minValuesBestEffort) {
    this.reserve = reserve;
    this.minValuesBestEffort = minValuesBestEffort;
  }

  /** Whether a pool's {@code minValues} its types cannot meet keeps it out ({@code Strict}). */
  public boolean minValuesStrict() {
    return !minValuesBestEffort;
  }

  /**
   * What a node of {@code type} in {@code pool} has for pods: its allocatable less the reserve and
   * its DaemonSets.
   */
  public Resources usable(NodePoolView pool, InstanceType type) {
    return type.allocatable().minus(reserve).minus(pool.daemonOverhead(labels(pool, type)));
  }

  /**
   * What a registered node of the type has for pods, from what it reports allocatable (the
   * kubelet's reservations are out of that already): less its DaemonSets' pods.
   */
  public Resources usableOn(NodePoolView pool, InstanceType type, Resources allocatable) {
    return allocatable.minus(pool.daemonOverhead(labels(pool, type)));
  }

  /**
   * A node to launch: its pool, its instance type and the pods meant for it — or, offered to {@link
   * #schedule} as on its way or there, the pods it runs already, and how many volumes each CSI
   * driver can attach there (its CSINode's counts; none known for a node not registered yet, as
   * upstream: no limit).
   */
  public record PlannedNode(
      NodePoolView pool,
      InstanceType type,
      List<PodRequest> pods,
      Resources free,
      Map<String, String> labels,
      List<Taint> taints,
      Map<String, Integer> volumeLimits) {
    public PlannedNode(
        NodePoolView pool,
        InstanceType type,
        List<PodRequest> pods,
        Resources free,
        Map<String, String> labels,
        List<Taint> taints) {
      this(pool, type, pods, free, labels, taints, Map.of());
    }

    /** A node with the labels its pool and type give it. */
    public PlannedNode(
        NodePoolView pool, InstanceType type, List<PodRequest> pods, Resources free) {
      this(pool, type, pods, free, Scheduler.labels(pool, type));
    }

    /** A node with its pool's taints (one not up yet: registration gives it those). */
    public PlannedNode(
        NodePoolView pool,
        InstanceType type,
        List<PodRequest> pods,
        Resources free,
        Map<String, String> labels) {
      this(pool, type, pods, free, labels, pool.taints());
    }
  }

  /**
   * A node pods are not planned onto — one no NodePool of ours made, or a node of ours going away —
   * whose pods still count where pods count wherever they are: topology spread, pod affinity and
   * anti-affinity across a topology key (upstream counts every pod in the cluster).
   */
  public record Bystander(
      String name, Map<String, String> labels, List<Taint> taints, List<PodRequest> pods)
      implements Topology.Node {
    @Override
    public String id() {
      return name;
    }

    @Override
    public boolean tolerates(PodRequest pod) {
      return pod.tolerates(taints);
    }
  }

  /**
   * The nodes to launch (not those already there), the pods no node can take, and the pods that go
   * onto a node already there or on its way (which of those offered to {@link #schedule}).
   */
  public record Plan(
      List<PlannedNode> nodes,
      List<PodRequest> unschedulable,
      Map<PodRequest, PlannedNode> onExisting) {
    public Plan(List<PlannedNode> nodes, List<PodRequest> unschedulable) {
      this(nodes, unschedulable, Map.of());
    }
  }

  public Plan schedule(
      List<PodRequest> pending, List<NodePoolView> pools, List<InstanceType> types) {
    return schedule(pending, pools, types, List.of());
  }

  /**
   * As {@link #schedule(List, List, List)}, with nodes already on their way ({@code inFlight}:
   * launched, not yet ready) offered to the pods first, so capacity coming is not launched twice.
   */
  public Plan schedule(
      List<PodRequest> pending,
      List<NodePoolView> pools,
      List<InstanceType> types,
      List<PlannedNode> inFlight) {
    return schedule(pending, pools, types, inFlight, List.of());
  }

  /**
   * As {@link #schedule(List, List, List, List)}, with the pods on nodes pods are not planned onto
   * ({@code bystanders}) counted for topology and affinity.
   */
  public Plan schedule(
      List<PodRequest> pending,
      List<NodePoolView> pools,
      List<InstanceType> types,
      List<PlannedNode> inFlight,
      List<Bystander> bystanders) {
    return new Solve(this, pending, pools, types, inFlight, bystanders).plan();
  }

  /**
   * The labels a node of {@code type} in {@code pool} gets: the type's, the pool's, and the pool's
   * name.
   */
  public static Map<String, String> labels(NodePoolView pool, InstanceType type) {
    Map<String, String> labels = new HashMap<>(type.labels());
    labels.putAll(pool.labels());
    labels.put(WellKnown.NODEPOOL_LABEL, pool.name());
    return labels;
  }
}
