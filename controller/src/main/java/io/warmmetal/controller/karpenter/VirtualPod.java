package io.warmmetal.controller.karpenter;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.Map;

/**
 * A CapacityBuffer's virtual pod, marked as upstream marks them ({@code
 * karpenter.sh/capacity-buffer-fake-pod}): it takes part in plans as a pending pod, but it is never
 * created in the cluster, so nothing is told about it (no event), it counts in no
 * PodDisruptionBudget, and it nominates no node (which would keep the node from drift for good).
 */
public final class VirtualPod {
  private VirtualPod() {}

  public static boolean is(HasMetadata object) {
    Map<String, String> annotations = object == null ? null : object.getMetadata().getAnnotations();
    return annotations != null
        && "true".equals(annotations.get(WellKnown.CAPACITY_BUFFER_FAKE_POD_ANNOTATION));
  }

  /** Its buffer, {@code namespace/name}; null for a pod that is not virtual. */
  public static String buffer(HasMetadata object) {
    if (!is(object)) {
      return null;
    }
    Map<String, String> annotations = object.getMetadata().getAnnotations();
    return annotations.get(WellKnown.CAPACITY_BUFFER_NAMESPACE_ANNOTATION)
        + "/"
        + annotations.get(WellKnown.CAPACITY_BUFFER_NAME_ANNOTATION);
  }
}
