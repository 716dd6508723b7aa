package io.warmmetal.controller.karpenter;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;

/**
 * {@code karpenter.sh/do-not-disrupt}, as upstream reads it: {@code "true"} protects a pod (or a
 * Node, or a NodeClaim) from voluntary disruption for good; on a pod, a duration ({@code "30m"},
 * {@code "1h"}) protects it for that long after it started. Anything else is as if the annotation
 * were not there.
 */
public final class DoNotDisrupt {
  private DoNotDisrupt() {}

  /** Whether the object is marked {@code "true"}. */
  public static boolean marked(HasMetadata object) {
    return object != null
        && object.getMetadata().getAnnotations() != null
        && "true"
            .equals(object.getMetadata().getAnnotations().get(WellKnown.DO_NOT_DISRUPT_ANNOTATION));
  }

  /**
   * Whether the pod is protected now: marked {@code "true"}, or started less than its duration ago.
   */
  public static boolean active(Pod pod, Instant now) {
    if (pod.getMetadata().getAnnotations() == null) {
      return false;
    }
    String value = pod.getMetadata().getAnnotations().get(WellKnown.DO_NOT_DISRUPT_ANNOTATION);
    if (value == null) {
      return false;
    }
    if (value.equals("true")) {
      return true;
    }
    Duration span = GoDuration.parseOr(value, null, null);
    if (span == null) {
      return false;
    }
    String started = pod.getStatus() == null ? null : pod.getStatus().getStartTime();
    return started == null
        || Instant.parse(started).plus(span).isAfter(now); // not started yet: protected
  }
}
