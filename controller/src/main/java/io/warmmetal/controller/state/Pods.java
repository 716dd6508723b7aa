package io.warmmetal.controller.state;

import io.fabric8.kubernetes.api.model.Pod;

/**
 * What a pod is to the nodes it runs on: whether it is one every node has, whether it has finished.
 */
public final class Pods {
  private Pods() {}

  /**
   * A DaemonSet's pod or a static (mirror) pod: it belongs to the node, not to the workload —
   * planned in as the node's overhead, not drained.
   */
  public static boolean daemonOrMirror(Pod pod) {
    if (pod.getMetadata().getAnnotations() != null
        && pod.getMetadata().getAnnotations().containsKey("kubernetes.io/config.mirror")) {
      return true;
    }
    return pod.getMetadata().getOwnerReferences() != null
        && pod.getMetadata().getOwnerReferences().stream()
            .anyMatch(o -> "DaemonSet".equals(o.getKind()));
  }

  /** A pod that ran to its end (Succeeded or Failed): it holds nothing. */
  public static boolean finished(Pod pod) {
    return pod.getStatus() != null
        && ("Succeeded".equals(pod.getStatus().getPhase())
            || "Failed".equals(pod.getStatus().getPhase()));
  }

  /**
   * Whether the pod is bound to a node and would have to move were that node taken away: not a
   * DaemonSet's (nor a mirror pod), not finished, not terminating.
   */
  public static boolean boundAndMovable(Pod pod) {
    return pod.getSpec() != null
        && pod.getSpec().getNodeName() != null
        && pod.getMetadata().getDeletionTimestamp() == null
        && !daemonOrMirror(pod)
        && !finished(pod);
  }
}
