package io.warmmetal.controller.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Karpenter's Prometheus metrics under upstream's names and labels ({@code pkg/metrics}, the
 * controllers' {@code metrics.go}), so Karpenter's dashboards and alerts read WarmMetal's
 * controller: NodeClaims and Nodes created, disrupted and terminated; NodePool usage and limits;
 * the scheduler's duration, queue depth and unschedulable pods; voluntary disruption decisions and
 * eligible nodes; the cluster state's node count. Lives as long as the process (across
 * leaderships), scraped at {@code /metrics} ({@link MetricsServer}).
 */
public final class KarpenterMetrics {
  /** Upstream's duration buckets (controller-runtime's, and longer ones), in seconds. */
  private static final double[] BUCKETS = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50,
    60, 120, 150, 300, 450, 600
  };

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Timer schedulingDuration;
  private final AtomicLong queueDepth = new AtomicLong();
  private final AtomicLong unschedulable = new AtomicLong();
  private final AtomicLong clusterNodes = new AtomicLong();
  private final MultiGauge usage;
  private final MultiGauge limit;
  private final MultiGauge eligible;

  public KarpenterMetrics() {
    Duration[] slos =
        Arrays.stream(BUCKETS)
            .mapToObj(s -> Duration.ofNanos((long) (s * 1e9)))
            .toArray(Duration[]::new);
    schedulingDuration =
        Timer.builder("karpenter.scheduler.scheduling_duration")
            .description(
                "Duration of scheduling simulations used for deprovisioning and provisioning in seconds.")
            .tag("controller", "provisioner")
            .serviceLevelObjectives(slos)
            .register(registry);
    registry.gauge(
        "karpenter.scheduler.queue_depth",
        Tags.of("controller", "provisioner", "scheduling_id", ""),
        queueDepth);
    registry.gauge(
        "karpenter.scheduler.unschedulable_pods_count",
        Tags.of("controller", "provisioner"),
        unschedulable);
    registry.gauge("karpenter.cluster_state.node_count", Tags.empty(), clusterNodes);
    registry.gauge("karpenter.cluster_state.synced", Tags.empty(), new AtomicLong(1));
    usage =
        MultiGauge.builder("karpenter.nodepools.usage")
            .description("The amount of resources that have been provisioned for a nodepool.")
            .register(registry);
    limit =
        MultiGauge.builder("karpenter.nodepools.limit")
            .description(
                "Limits specified on the nodepool that restrict the quantity of resources provisioned.")
            .register(registry);
    eligible =
        MultiGauge.builder("karpenter.voluntary_disruption.eligible_nodes")
            .description(
                "Number of nodes eligible for disruption by Karpenter. Labeled by disruption reason.")
            .register(registry);
  }

  /** The text Prometheus scrapes. */
  public String scrape() {
    return registry.scrape();
  }

  public void nodeClaimCreated(String nodePool, String reason) {
    counter(
            "karpenter.nodeclaims.created",
            "reason",
            reason,
            "nodepool",
            nodePool,
            "min_values_relaxed",
            "false")
        .increment();
  }

  public void nodeClaimTerminated(String nodePool, String capacityType, String zone) {
    counter(
            "karpenter.nodeclaims.terminated",
            "nodepool",
            nodePool,
            "capacity_type",
            capacityType,
            "zone",
            zone)
        .increment();
  }

  public void nodeClaimDisrupted(
      String reason, String nodePool, String consolidationPolicy, String terminationMode) {
    counter(
            "karpenter.nodeclaims.disrupted",
            "reason",
            reason,
            "nodepool",
            nodePool,
            "capacity_type",
            "on-demand",
            "consolidation_policy",
            consolidationPolicy,
            "termination_mode",
            terminationMode)
        .increment();
  }

  public void nodeCreated(String nodePool, String zone) {
    counter("karpenter.nodes.created", "nodepool", nodePool, "zone", zone).increment();
  }

  public void nodeTerminated(String nodePool, String zone) {
    counter("karpenter.nodes.terminated", "nodepool", nodePool, "zone", zone).increment();
  }

  /**
   * A voluntary disruption decision: {@code decision} delete or replace, for a reason (empty,
   * underutilized…).
   */
  public void disruptionDecision(String decision, String reason, String consolidationType) {
    counter(
            "karpenter.voluntary_disruption.decisions",
            "decision",
            decision,
            "reason",
            reason,
            "consolidation_type",
            consolidationType)
        .increment();
  }

  /** How long one scheduling simulation took. */
  public void scheduled(Duration took) {
    schedulingDuration.record(took);
  }

  /** The pods the last simulation had to place, and how many of them it could not. */
  public void pending(int pods, int unplaced) {
    queueDepth.set(pods);
    unschedulable.set(unplaced);
  }

  public void clusterNodes(int count) {
    clusterNodes.set(count);
  }

  /** Each NodePool's usage and limits, by resource type: the rows replace the last ones. */
  public void nodePools(
      Map<String, Map<String, Double>> usageByPool, Map<String, Map<String, Double>> limitsByPool) {
    usage.register(rows(usageByPool), true);
    limit.register(rows(limitsByPool), true);
  }

  public void eligibleNodes(Map<String, Integer> byReason) {
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    byReason.forEach((reason, n) -> rows.add(MultiGauge.Row.of(Tags.of("reason", reason), n)));
    eligible.register(rows, true);
  }

  private static List<MultiGauge.Row<?>> rows(Map<String, Map<String, Double>> byPool) {
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    byPool.forEach(
        (pool, resources) ->
            resources.forEach(
                (type, value) ->
                    rows.add(
                        MultiGauge.Row.of(
                            Tags.of("nodepool", pool, "resource_type", type), value))));
    return rows;
  }

  /**
   * WarmMetal's own: a pending pod touched so kube-scheduler tries it on its newly initialized node
   * now.
   */
  public void podNudged(String nodePool) {
    counter("warmmetal.pods.nudged", "nodepool", nodePool).increment();
  }

  private Counter counter(String name, String... tags) {
    for (int i = 1; i < tags.length; i += 2) {
      if (tags[i] == null) {
        tags[i] = "";
      }
    }
    return registry.counter(name, tags);
  }
}
