package io.warmmetal.controller.metrics;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.prometheus.client.Collector;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.GaugeMetricFamily;
import io.prometheus.client.Histogram;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

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
  private final MultiGauge allowedDisruptions;
  private final MultiGauge consumingBudgets;
  private final PodProvisioning podProvisioning;
  private final MultiGauge cost;
  private final MultiGauge pendingByZone;
  private final ClusterMetrics cluster;
  private final Histogram consolidationScores =
      Histogram.build()
          .name("karpenter_consolidation_score")
          .help("Score of balanced consolidation moves. Labeled by decision, NodePool, and policy.")
          .labelNames("decision", "nodepool", "policy")
          .buckets(0.1, 0.25, 0.33, 0.5, 1.0, 2.0, 5.0, 10.0)
          .create();
  private final GoSummary podStartup =
      new GoSummary(
          "karpenter_pods_startup_duration_seconds",
          "The time from pod creation until the pod is running.");
  private final GoSummary nodeTermination =
      new GoSummary(
          "karpenter_nodes_termination_duration_seconds",
          "The time taken between a node's deletion request and the removal of its finalizer",
          "nodepool");

  public KarpenterMetrics() {
    this(Clock.systemUTC());
  }

  /**
   * @param clock what the cluster's gauges count ages and waits with
   */
  public KarpenterMetrics(Clock clock) {
    podProvisioning = new PodProvisioning(clock, BUCKETS);
    schedulingDuration =
        Timer.builder("karpenter.scheduler.scheduling_duration")
            .description(
                "Duration of scheduling simulations used for deprovisioning and provisioning in seconds.")
            .tag("controller", "provisioner")
            .serviceLevelObjectives(DURATION_SLOS)
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
    allowedDisruptions =
        MultiGauge.builder("karpenter.nodepools.allowed_disruptions")
            .description(
                "The number of nodes for a given NodePool that can be concurrently disrupting at a"
                    + " point in time. Labeled by NodePool. Note that allowed disruptions can change"
                    + " very rapidly, as new nodes may be created and others may be deleted at any"
                    + " point.")
            .register(registry);
    consumingBudgets =
        MultiGauge.builder("karpenter.nodepools.nodes_consuming_budgets")
            .description(
                "The number of nodes consuming the budget of a nodepool at a point in time."
                    + " Labeled by NodePool.")
            .register(registry);
    cost =
        MultiGauge.builder("karpenter.nodepools.cost_total")
            .description(
                "Total cost of the nodepool from Karpenter's perspective. Units are determined by the"
                    + " cloud provider. Not an authoritative source for billing. Includes"
                    + " modifications due to NodeOverlays")
            .register(registry);
    pendingByZone =
        MultiGauge.builder("karpenter.scheduler.pending_pods_by_effective_zone_count")
            .description(
                "Pending pods dimensioned by effective zone constraint, or the intersection of"
                    + " pod-level zone signals, volume topology (PVC zones), and topology constraints."
                    + " Values: specific zone name (e.g., 'us-west-2a'), 'flexible' (multiple zones),"
                    + " or 'none' (no valid intersection).")
            .register(registry);
    // As upstream: both consolidation types' timeouts are there from the start, at 0.
    consolidationTimedOut("multi", 0);
    consolidationTimedOut("single", 0);
    registry.gauge("karpenter.cluster_state.unsynced_time_seconds", Tags.empty(), new AtomicLong());
    registry.gauge("karpenter.scheduler.ignored_pods_count", Tags.empty(), new AtomicLong());
    registry.gauge(
        "karpenter.scheduler.unfinished_work_seconds",
        Tags.of("controller", "provisioner", "scheduling_id", ""),
        new AtomicLong());
    cluster = new ClusterMetrics(clock);
    CollectorRegistry collectors = registry.getPrometheusRegistry();
    collectors.register(cluster);
    collectors.register(podStartup);
    collectors.register(withoutCreated(consolidationScores));
    collectors.register(withoutCreated(podProvisioning));
    collectors.register(nodeTermination);
    collectors.register(new BuildInfo());
  }

  /** {@code karpenter_build_info}: 1, labelled with what this controller was built from. */
  private static final class BuildInfo extends Collector {
    @Override
    public List<MetricFamilySamples> collect() {
      String version = KarpenterMetrics.class.getPackage().getImplementationVersion();
      GaugeMetricFamily info =
          new GaugeMetricFamily(
              "karpenter_build_info",
              "A metric with a constant '1' value labeled by version from which karpenter was"
                  + " built.",
              List.of("version", "goversion", "goarch", "commit"));
      info.addMetric(
          List.of(
              version == null ? "dev" : version,
              "java" + Runtime.version().feature(),
              System.getProperty("os.arch"),
              ""),
          1);
      return List.of(info);
    }
  }

  /**
   * The cluster as a pass saw it, for the cluster-state gauges (nodes' resources, pods' state),
   * taken in at most every few seconds.
   */
  public void observeCluster(List<Node> nodes, List<Pod> pods) {
    cluster.observe(nodes, pods);
  }

  /** Pending pods the provisioner saw this pass (each timed from the first time). */
  public void podsPending(Collection<Pod> pending) {
    podProvisioning.seen(pending);
  }

  /** What a plan decided for pending pods: a place for some, none for the others. */
  public void podsDecided(Collection<Pod> placed, Collection<Pod> unplaced) {
    podProvisioning.decided(placed, unplaced);
  }

  /** A pod bound to a node, as the informer saw it. */
  public void podBoundNow(Pod pod) {
    podProvisioning.bound(pod);
  }

  /** A pod running, as the informer saw it. */
  public void podStartedNow(Pod pod) {
    podProvisioning.started(pod);
  }

  /** A pod gone. */
  public void podDeleted(Pod pod) {
    podProvisioning.deleted(pod);
  }

  /** A pod running: how long after its creation. */
  public void podStarted(Duration sinceCreation) {
    podStartup.observe(seconds(sinceCreation));
  }

  /** A pod bound to a node: how long after its creation. */
  public void podBound(Duration sinceCreation) {
    timer(
            "karpenter.pods.bound_duration",
            "The time from pod creation until the pod is bound.",
            DURATION_SLOS)
        .record(sinceCreation);
  }

  /** A Node let go: how long after its deletion was asked. */
  public void nodeTerminationDuration(String nodePool, Duration sinceDeletion) {
    nodeTermination.observe(seconds(sinceDeletion), str(nodePool));
  }

  /** A NodeClaim let go: how long after its deletion was asked. */
  public void nodeClaimTerminationDuration(String nodePool, Duration took) {
    timer(
            "karpenter.nodeclaims.termination_duration",
            "Duration of NodeClaim termination in seconds.",
            EXPONENTIAL_12,
            "nodepool",
            nodePool)
        .record(took);
  }

  /** An instance terminated through the cloud provider: how long the call took. */
  public void instanceTerminationDuration(String nodePool, Duration took) {
    timer(
            "karpenter.nodeclaims.instance_termination_duration",
            "Duration of CloudProvider Instance termination in seconds.",
            EXPONENTIAL_11,
            "nodepool",
            nodePool)
        .record(took);
  }

  /** A node gone: how long it lived. */
  public void nodeLifetime(String nodePool, Duration lived) {
    timer(
            "karpenter.nodes.lifetime_duration",
            "The lifetime duration of the nodes since creation.",
            LIFETIME_SLOS,
            "nodepool",
            nodePool)
        .record(lived);
  }

  public void nodeDrained(String nodePool) {
    counter("karpenter.nodes.drained", "nodepool", nodePool).increment();
  }

  /** A pod drained off a node being terminated: why ({@code reason} as upstream's). */
  public void podDrained(String reason) {
    counter("karpenter.pods.drained", "reason", reason).increment();
  }

  /** An eviction asked of the API server: its answer's code. */
  public void evictionRequested(int code) {
    counter("karpenter.pods.eviction_requests", "code", String.valueOf(code)).increment();
  }

  /** A call of the cloud provider: how long it took, and its error's kind if it failed. */
  public void cloudProviderCall(String method, Duration took, String error) {
    timer(
            "karpenter.cloudprovider.duration",
            "Duration of cloud provider method calls. Labeled by the controller, method name and"
                + " provider.",
            DEF_SLOS,
            "controller",
            "",
            "method",
            method,
            "provider",
            PROVIDER)
        .record(took);
    if (error != null) {
      counter(
              "karpenter.cloudprovider.errors",
              "controller",
              "",
              "method",
              method,
              "provider",
              PROVIDER,
              "error",
              error)
          .increment();
    }
  }

  /**
   * One reconcile of a controller (controller-runtime's metrics, which upstream's dashboards read):
   * its time and result — success, error, requeue_after.
   */
  public void reconciled(String controller, Duration took, String result) {
    counter("controller_runtime.reconcile", "controller", controller, "result", result).increment();
    if ("error".equals(result)) {
      counter("controller_runtime.reconcile_errors", "controller", controller).increment();
    }
    timer(
            "controller_runtime.reconcile_time",
            "Length of time per reconciliation per controller",
            RECONCILE_SLOS,
            "controller",
            controller)
        .record(took);
  }

  /** A work queue's depth, read when scraped. */
  public void workQueue(String name, Supplier<Number> depth) {
    registry.gauge(
        "workqueue.depth",
        Tags.of("name", name, "controller", name, "priority", ""),
        depth,
        d -> d.get().doubleValue());
  }

  /** How many more nodes each NodePool may disrupt now, by reason. */
  public void allowedDisruptions(Map<String, Map<String, Integer>> byPool) {
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    byPool.forEach(
        (pool, byReason) ->
            byReason.forEach(
                (reason, n) ->
                    rows.add(MultiGauge.Row.of(Tags.of("nodepool", pool, "reason", reason), n))));
    allowedDisruptions.register(rows, true);
  }

  /**
   * How many of each NodePool's nodes are being disrupted now (deleting, or in a command under
   * way), for each disruption reason: what they take from its budgets.
   */
  public void nodesConsumingBudgets(Map<String, Integer> disruptingByPool, List<String> reasons) {
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    disruptingByPool.forEach(
        (pool, n) ->
            reasons.forEach(
                reason ->
                    rows.add(MultiGauge.Row.of(Tags.of("nodepool", pool, "reason", reason), n))));
    consumingBudgets.register(rows, true);
  }

  /** The pending pods a plan was given, counted by their effective zone. */
  public void pendingByEffectiveZone(Map<String, Integer> byZone) {
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    byZone.forEach(
        (zone, n) ->
            rows.add(MultiGauge.Row.of(Tags.of("controller", "provisioner", "zone", zone), n)));
    pendingByZone.register(rows, true);
  }

  /** What each NodePool's nodes cost, as its instance types are priced (a NodePool of none: 0). */
  public void nodePoolCosts(Map<String, Double> byPool) {
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    byPool.forEach((pool, total) -> rows.add(MultiGauge.Row.of(Tags.of("nodepool", pool), total)));
    cost.register(rows, true);
  }

  /** A consolidation of the type ran out of its time before it found a move or ran out. */
  public void consolidationTimedOut(String consolidationType) {
    consolidationTimedOut(consolidationType, 1);
  }

  private void consolidationTimedOut(String consolidationType, int times) {
    Counter.builder("karpenter.voluntary_disruption.consolidation_timeouts")
        .description(
            "Number of times the Consolidation algorithm has reached a timeout. Labeled by"
                + " consolidation type.")
        .tag("consolidation_type", consolidationType)
        .register(registry)
        .increment(times);
  }

  /** The text Prometheus scrapes. */
  public String scrape() {
    return registry.scrape();
  }

  public void nodeClaimCreated(String nodePool, String reason) {
    nodeClaimCreated(nodePool, reason, false);
  }

  /** A NodeClaim created; {@code minValuesRelaxed} when its pool's minValues were relaxed. */
  public void nodeClaimCreated(String nodePool, String reason, boolean minValuesRelaxed) {
    counter(
            "karpenter.nodeclaims.created",
            "reason",
            reason,
            "nodepool",
            nodePool,
            "min_values_relaxed",
            String.valueOf(minValuesRelaxed))
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

  /**
   * A NodeClaim deleted because its Node showed an unhealthy condition (node repair); {@code
   * condition} in snake case, as upstream labels it ({@code ready}).
   */
  public void nodeClaimUnhealthyDisrupted(
      String condition, String nodePool, String capacityType, String imageId) {
    Counter.builder("karpenter.nodeclaims.unhealthy_disrupted")
        .description(
            "Number of unhealthy nodeclaims disrupted in total by Karpenter. Labeled by condition"
                + " on the node was disrupted, the owning nodepool, and the image ID.")
        .tags(
            present(
                "condition",
                condition,
                "nodepool",
                nodePool,
                "capacity_type",
                capacityType,
                "image_id",
                imageId))
        .register(registry)
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
   * underutilized…), of nodes of these NodePools.
   */
  public void disruptionDecision(
      List<String> nodePools, String decision, String reason, String consolidationType) {
    for (String nodePool : nodePools) {
      counter(
              "karpenter.voluntary_disruption.decisions_by_nodepool",
              "nodepool",
              nodePool,
              "decision",
              decision,
              "reason",
              reason,
              "consolidation_type",
              consolidationType)
          .increment();
    }
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

  /** How long a disruption method took to decide (whether or not it started a command). */
  public void decisionEvaluated(String reason, String consolidationType, Duration took) {
    timer(
            "karpenter.voluntary_disruption.decision_evaluation_duration",
            "Duration of the disruption decision evaluation process in seconds. Labeled by method"
                + " and consolidation type.",
            DURATION_SLOS,
            "reason",
            reason,
            "consolidation_type",
            consolidationType)
        .record(took);
  }

  /** A consolidation move judged ({@code karpenter_consolidation_moves_total}). */
  public void consolidationMove(String decision, String nodePool, String policy) {
    counter(
            "karpenter.consolidation.moves",
            "decision",
            decision,
            "nodepool",
            nodePool,
            "policy",
            policy)
        .increment();
  }

  /**
   * A Balanced NodePool's score of a move ({@code karpenter_consolidation_score}, upstream's
   * buckets: a Prometheus histogram of its own, as Micrometer's would round scores up to whole
   * numbers).
   */
  public void consolidationScore(String decision, String nodePool, String policy, double score) {
    consolidationScores.labels(decision, str(nodePool), policy).observe(score);
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

  /** Upstream's DurationBuckets(), as a Timer's service level objectives. */
  private static final Duration[] DURATION_SLOS = slos(BUCKETS);

  /** Prometheus' DefBuckets. */
  private static final Duration[] DEF_SLOS =
      slos(new double[] {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10});

  /** controller-runtime's reconcile buckets. */
  private static final Duration[] RECONCILE_SLOS = slos(Arrays.copyOf(BUCKETS, 40));

  /** Upstream's node lifetime buckets: 15 minutes to 30 days. */
  private static final Duration[] LIFETIME_SLOS =
      slos(
          new double[] {
            900, 1800, 2700, 3600, 7200, 14400, 21600, 28800, 36000, 43200, 57600, 72000, 86400,
            172800, 259200, 432000, 864000, 1296000, 1728000, 2160000, 2592000
          });

  /** prometheus.ExponentialBuckets(1, 2, 11) and (1, 2, 12). */
  private static final Duration[] EXPONENTIAL_11 = slos(exponential(11));

  private static final Duration[] EXPONENTIAL_12 = slos(exponential(12));

  /** The provider upstream's cloud-provider metrics name. */
  static final String PROVIDER = "warmmetal";

  private static double[] exponential(int n) {
    double[] buckets = new double[n];
    for (int i = 0; i < n; i++) {
      buckets[i] = 1L << i;
    }
    return buckets;
  }

  /** Bucket bounds in seconds as durations, worked out once (a Timer takes them each lookup). */
  /** The collector's series without the Java client's {@code _created} sample: Go's has none. */
  private static Collector withoutCreated(Collector collector) {
    return new Collector() {
      @Override
      public List<MetricFamilySamples> collect() {
        return collector.collect().stream()
            .map(
                family ->
                    new MetricFamilySamples(
                        family.name,
                        family.type,
                        family.help,
                        family.samples.stream()
                            .filter(sample -> !sample.name.endsWith("_created"))
                            .toList()))
            .toList();
      }
    };
  }

  private static Duration[] slos(double[] seconds) {
    return Arrays.stream(seconds)
        .mapToObj(b -> Duration.ofNanos((long) (b * 1e9)))
        .toArray(Duration[]::new);
  }

  private Timer timer(String name, String help, Duration[] buckets, String... tags) {
    return Timer.builder(name)
        .description(help)
        .tags(present(tags))
        .serviceLevelObjectives(buckets)
        .register(registry);
  }

  private static double seconds(Duration d) {
    return d.toNanos() / 1e9;
  }

  private static String str(String value) {
    return value == null ? "" : value;
  }

  private Counter counter(String name, String... tags) {
    return registry.counter(name, present(tags));
  }

  /** The tags with an absent value as an empty one (Prometheus has no null label). */
  private static String[] present(String... tags) {
    for (int i = 1; i < tags.length; i += 2) {
      if (tags[i] == null) {
        tags[i] = "";
      }
    }
    return tags;
  }
}
