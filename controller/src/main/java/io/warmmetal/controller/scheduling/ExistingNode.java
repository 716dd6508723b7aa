package io.warmmetal.controller.scheduling;

import io.warmmetal.controller.scheduling.Scheduler.PlannedNode;

/**
 * A node there or on its way, as offered to {@link Scheduler#schedule}: its type, labels and taints
 * (a cordon, a disruption's taint count) are known, and the pods it runs already count for pods per
 * node, ports and anti-affinity.
 */
final class ExistingNode extends OpenNode {
  /** The node as offered. */
  final PlannedNode source;

  ExistingNode(String id, PlannedNode source) {
    super(id, source.pool(), source.taints());
    this.source = source;
    type = source.type();
    labels = source.labels();
    free = source.free();
    findDaemonPorts();
    pods.addAll(source.pods());
    source.pods().forEach(this::count);
  }

  @Override
  boolean hasRoomFor(PodRequest pod) {
    return free.fits(pod.requests()) && pod.accepts(labels);
  }

  @Override
  void makeRoom(PodRequest pod, PodRequest as) {
    free = free.minus(pod.requests());
  }
}
