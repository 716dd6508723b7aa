package io.warmmetal.controller.scheduling;

import io.warmmetal.controller.scheduling.Scheduler.PlannedNode;
import java.util.HashSet;
import java.util.Set;

/**
 * A node there or on its way, as offered to {@link Scheduler#schedule}: its type, labels and taints
 * (a cordon, a disruption's taint count) are known, and the pods it runs already count for pods per
 * node, ports, anti-affinity and its CSI drivers' attach limits.
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
    return free.fits(pod.requests()) && pod.accepts(labels) && volumesFit(pod);
  }

  /**
   * Whether the volumes of the pods there and the pod's, each claim once (pods sharing a claim
   * attach it once), stay within each CSI driver's attach limit — upstream's VolumeUsage.
   */
  private boolean volumesFit(PodRequest pod) {
    if (pod.volumes().isEmpty() || source.volumeLimits().isEmpty()) {
      return true;
    }
    for (var driver : pod.volumes().entrySet()) {
      Integer limit = source.volumeLimits().get(driver.getKey());
      if (limit == null) {
        continue;
      }
      Set<String> attached = new HashSet<>(driver.getValue());
      pods.forEach(p -> attached.addAll(p.volumes().getOrDefault(driver.getKey(), Set.of())));
      if (attached.size() > limit) {
        return false;
      }
    }
    return true;
  }

  @Override
  void makeRoom(PodRequest pod, PodRequest as) {
    free = free.minus(pod.requests());
  }
}
