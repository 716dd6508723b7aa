package io.warmmetal.controller.scheduling;

import io.fabric8.kubernetes.api.model.Taint;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A node pods can go onto while a plan is made: one there or on its way ({@link ExistingNode}), or
 * a new one the plan launches ({@link NewNode}). Its labels and the pods on it are what topology
 * sees; its type, labels and free resources may change as pods join a new one.
 */
abstract sealed class OpenNode implements Topology.Node permits ExistingNode, NewNode {
  /** Its hostname domain until it has a name. */
  private final String id;

  final NodePoolView pool;
  final List<Taint> taints;
  InstanceType type;
  Map<String, String> labels;
  final List<PodRequest> pods = new ArrayList<>();
  Resources free;

  /** Host ports its DaemonSets bind there. */
  private List<HostPort> daemonPorts = List.of();

  private int withPorts;
  private int withAntiAffinity;

  OpenNode(String id, NodePoolView pool, List<Taint> taints) {
    this.id = id;
    this.pool = pool;
    this.taints = taints;
  }

  /** Finds the host ports its DaemonSets bind, once its labels are known. */
  final void findDaemonPorts() {
    daemonPorts = pool.daemons().isEmpty() ? List.of() : pool.daemonPorts(labels);
  }

  @Override
  public String id() {
    return id;
  }

  @Override
  public Map<String, String> labels() {
    return labels;
  }

  @Override
  public List<PodRequest> pods() {
    return pods;
  }

  @Override
  public boolean tolerates(PodRequest pod) {
    return pod.tolerates(taints);
  }

  /** Whether it has room for the pod and its labels suit it. */
  abstract boolean hasRoomFor(PodRequest pod);

  /** Makes room for the pod, placed as {@code as}. */
  abstract void makeRoom(PodRequest pod, PodRequest as);

  boolean takes(PodRequest pod) {
    if (!pod.tolerates(taints) || !hasRoomFor(pod)) {
      return false;
    }
    // The pairwise checks only where a pod of the pair has ports or anti-affinity: most have
    // neither.
    if ((!pod.hostPorts().isEmpty() || withPorts > 0)
        && pods.stream().anyMatch(pod::portsConflictWith)) {
      return false;
    }
    if (daemonPortsTaken(pod)) {
      return false;
    }
    return (pod.allAntiAffinity().isEmpty() && withAntiAffinity == 0)
        || pods.stream().noneMatch(p -> pod.repels(p, PodAffinityTerm.HOSTNAME));
  }

  /** Adds the pod, placed as {@code as} (the pod with the preferences it was placed with). */
  final void add(PodRequest pod, PodRequest as) {
    makeRoom(pod, as);
    pods.add(pod);
    count(pod);
  }

  /** Whether a DaemonSet that will run here binds a host port the pod binds. */
  final boolean daemonPortsTaken(PodRequest pod) {
    return !daemonPorts.isEmpty()
        && pod.hostPorts().stream().anyMatch(p -> daemonPorts.stream().anyMatch(p::conflictsWith));
  }

  final void count(PodRequest pod) {
    withPorts += pod.hostPorts().isEmpty() ? 0 : 1;
    withAntiAffinity += pod.allAntiAffinity().isEmpty() ? 0 : 1;
  }
}
