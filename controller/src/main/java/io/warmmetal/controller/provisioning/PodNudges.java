package io.warmmetal.controller.provisioning;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.controller.karpenter.VirtualPod;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells kube-scheduler that a pending pod's node is usable now, by touching the pod.
 *
 * <p>A pod planned onto a new node fails its first attempt there: every Node is created with the
 * not-ready taint, so kube-scheduler backs the pod off (1 s, 2 s, … doubling, released by a flush
 * every second). Events about the node (Ready, taints lifted) find it backing off and leave it to
 * wait out the rest — seconds between Node Ready and the pod bound. Up to Kubernetes 1.20 an update
 * to a pending pod moves it from the backoff queue to the active one (kubernetes/kubernetes#98829
 * made 1.21+ keep the backoff; 1.33+ pops the backoff queue whenever the active one is empty), so
 * the controller changes one annotation ({@value #ANNOTATION}: the node and the time) on each pod
 * it planned onto a node the moment that node is initialized — Ready, no taint of its start left.
 * The pod stays kube-scheduler's to place; nothing else about it changes.
 *
 * <p>A pod is touched at most {@value #MOST_PER_NODE} times per node, at least {@link #AGAIN_AFTER}
 * apart: a touch may reach kube-scheduler before the node's last taint did, and one that keeps
 * failing there has a reason a touch does not cure.
 */
public final class PodNudges {
  private static final Logger LOG = LoggerFactory.getLogger(PodNudges.class);
  public static final String ANNOTATION = "warmmetal.io/nudged";
  static final int MOST_PER_NODE = 3;
  static final Duration AGAIN_AFTER = Duration.ofSeconds(1);

  private record Nudge(String node, int count, Instant at) {}

  private final Map<String, Nudge> last = new ConcurrentHashMap<>();
  private final Clock clock;
  private final KubernetesClient kube;
  private final KarpenterMetrics metrics;
  private final ExecutorService patches;

  /**
   * @param kube where the pods are patched; null: decisions only (tests of the policy)
   */
  PodNudges(KubernetesClient kube, KarpenterMetrics metrics, Clock clock) {
    this.kube = kube;
    this.metrics = metrics;
    this.clock = clock;
    this.patches =
        Executors.newFixedThreadPool(
            4,
            r -> {
              Thread t = new Thread(r, "warmmetal-nudge");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Whether the pod with this UID, pending and planned onto {@code node} (initialized), is due a
   * touch now; if so, it is counted as touched.
   */
  boolean due(String podUid, String node) {
    Instant now = clock.instant();
    boolean[] due = {false};
    last.compute(
        podUid,
        (uid, before) -> {
          if (before == null || !before.node().equals(node)) {
            due[0] = true;
            return new Nudge(node, 1, now);
          }
          if (before.count() < MOST_PER_NODE && !now.isBefore(before.at().plus(AGAIN_AFTER))) {
            due[0] = true;
            return new Nudge(node, before.count() + 1, now);
          }
          return before;
        });
    return due[0];
  }

  /**
   * Touches the pod if it is due (the patch runs behind this call: a pass does not wait on it); a
   * CapacityBuffer's virtual pod exists nowhere to be touched.
   */
  void nudge(Pod pod, String node, String nodePool) {
    if (VirtualPod.is(pod) || !due(pod.getMetadata().getUid(), node)) {
      return;
    }
    String value = node + "@" + clock.millis();
    String patch =
        Serialization.asJson(Map.of("metadata", Map.of("annotations", Map.of(ANNOTATION, value))));
    patches.execute(
        () -> {
          try {
            kube.pods()
                .inNamespace(pod.getMetadata().getNamespace())
                .withName(pod.getMetadata().getName())
                .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
            metrics.podNudged(nodePool);
          } catch (KubernetesClientException e) {
            // Gone, or refused (a policy on pod updates): kube-scheduler's backoff still places it.
            LOG.debug(
                "Touching pod {}/{} failed: {}",
                pod.getMetadata().getNamespace(),
                pod.getMetadata().getName(),
                e.getMessage());
          }
        });
  }

  /** Forgets the pods no longer pending. */
  void retain(Set<String> pendingUids) {
    last.keySet().retainAll(pendingUids);
  }

  void close() {
    patches.shutdownNow();
    try {
      patches.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
