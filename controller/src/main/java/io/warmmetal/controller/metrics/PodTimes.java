package io.warmmetal.controller.metrics;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * How long pods take to be bound and to run, from their creation, as the pod informer sees them
 * change ({@code karpenter_pods_bound_duration_seconds}, {@code
 * karpenter_pods_startup_duration_seconds}): each counted once, when it happens; and from when the
 * scheduler first found them a place ({@code karpenter_pods_provisioning_*}).
 */
public final class PodTimes implements ResourceEventHandler<Pod> {
  private final KarpenterMetrics metrics;
  private final Clock clock;

  public PodTimes(KarpenterMetrics metrics, Clock clock) {
    this.metrics = metrics;
    this.clock = clock;
  }

  @Override
  public void onAdd(Pod pod) {
    // Seen first as it already is (a restart, a relist): not a change to time.
  }

  @Override
  public void onUpdate(Pod before, Pod after) {
    String created = after.getMetadata().getCreationTimestamp();
    if (created == null) {
      return;
    }
    Duration age = Duration.between(Instant.parse(created), clock.instant());
    if (node(before) == null && node(after) != null) {
      metrics.podBound(age);
      metrics.podBoundNow(after);
    }
    if (!running(before) && running(after)) {
      metrics.podStarted(age);
      metrics.podStartedNow(after);
    }
  }

  @Override
  public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {
    metrics.podDeleted(pod);
  }

  private static String node(Pod pod) {
    return pod.getSpec() == null ? null : pod.getSpec().getNodeName();
  }

  private static boolean running(Pod pod) {
    return pod.getStatus() != null && "Running".equals(pod.getStatus().getPhase());
  }
}
