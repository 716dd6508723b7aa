package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Pod;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.provisioning.Provisioner;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.NodePoolView;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.state.ClusterState;
import io.warmmetal.controller.state.PodRequests;
import java.util.List;
import java.util.Map;

/**
 * The cluster as disruption plans against it, and what launches the replacements it plans: the
 * {@link Provisioner}'s picture ({@link ClusterState}) and launches in production, a fixed one in
 * tests.
 */
interface Capacity {
  /** Each NodeClaim not being deleted, as a node the scheduler can place pods on. */
  Map<NodeClaim, Scheduler.PlannedNode> nodes();

  /** The NodePools as the scheduler sees them. */
  List<NodePoolView> pools();

  /** The types a new node can be of now. */
  List<InstanceType> launchable();

  /** The pod as plans see it (its volumes counted against attach limits, in production). */
  default PodRequest request(Pod pod) {
    return PodRequests.of(pod);
  }

  /** The nodes pods are not planned onto, whose pods count for topology and affinity. */
  default List<Scheduler.Bystander> bystanders() {
    return List.of();
  }

  /**
   * Creates and launches a NodeClaim for each node planned, its fallback shapes each cheaper than
   * {@code priceBelow}. Returns them all, or null if one could not be launched.
   */
  List<NodeClaim> launch(List<Scheduler.PlannedNode> nodes, String reason, double priceBelow)
      throws Exception;

  /** Makes the capacity a pass plans against from the NodeClaims and pods the pass listed. */
  @FunctionalInterface
  interface Source {
    Capacity of(List<NodeClaim> claims, List<Pod> pods) throws Exception;
  }

  /** The provisioner's: the cluster state it plans against, its launchable types, its launches. */
  static Source of(Provisioner provisioner) {
    return (claims, pods) -> new Provisioned(provisioner, provisioner.state(claims, pods));
  }

  record Provisioned(Provisioner provisioner, ClusterState state) implements Capacity {
    @Override
    public Map<NodeClaim, Scheduler.PlannedNode> nodes() {
      return state.nodes;
    }

    @Override
    public List<NodePoolView> pools() {
      return state.views;
    }

    @Override
    public List<InstanceType> launchable() {
      return provisioner.launchable(state);
    }

    @Override
    public PodRequest request(Pod pod) {
      return state.request(pod);
    }

    @Override
    public List<Scheduler.Bystander> bystanders() {
      return state.bystanders;
    }

    @Override
    public List<NodeClaim> launch(
        List<Scheduler.PlannedNode> nodes, String reason, double priceBelow) throws Exception {
      return provisioner.replacements(state, nodes, reason, priceBelow);
    }
  }
}
