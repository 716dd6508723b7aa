package io.warmmetal.api.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * The API's Prometheus metrics: launch latency, launch batch sizes, claims, machines per shape and
 * state, pool deficits, open and refused connections per port.
 */
public final class FleetMetrics {
  /** The outcome of a launch that launched (a new launch, not a replay or a refusal). */
  public static final String LAUNCHED = "launched";

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Map<String, Timer> launchTimers = new ConcurrentHashMap<>();
  private final Map<String, Timer> launchStages = new ConcurrentHashMap<>();
  private final Map<String, Counter> claims = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> deficits = new ConcurrentHashMap<>();

  /**
   * What the function counters read: Micrometer holds a function counter's object weakly, and a
   * method reference nothing else holds is collected — the counter then repeats its last value.
   */
  private final List<Object> counted = new CopyOnWriteArrayList<>();

  private final MultiGauge machines;
  private final DistributionSummary launchBatches;

  public FleetMetrics() {
    machines =
        MultiGauge.builder("warmmetal.machines")
            .description("Machines by shape and state")
            .register(registry);
    launchBatches =
        DistributionSummary.builder("warmmetal.launch.batch.size")
            .description("Launch requests per database call (launches arriving together share one)")
            .serviceLevelObjectives(1, 2, 4, 8, 16, 32, 64)
            .register(registry);
  }

  /**
   * Where a launch's time went inside the API: {@code prepare} (fingerprint, sealing, ids on a
   * worker), {@code queued} (waiting for a database call), {@code database} (the call carrying it,
   * to its commit).
   */
  public void launchStage(String stage, long nanos) {
    launchStages
        .computeIfAbsent(
            stage,
            s ->
                Timer.builder("warmmetal.launch.stage")
                    .description("Time a launch spends in each stage inside the API")
                    .tag("stage", s)
                    .publishPercentiles(0.5, 0.99)
                    .register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /** A database call carrying {@code launches} launch requests went out. */
  public void launchBatchSent(int launches) {
    launchBatches.record(launches);
  }

  /** A launch request finished with {@code outcome} (launched, replayed, or an error code). */
  public void launchFinished(long nanos, String outcome) {
    launchTimers
        .computeIfAbsent(
            outcome,
            o ->
                Timer.builder("warmmetal.launch.duration")
                    .description("Time to answer POST /v1/instances")
                    .tag("outcome", o)
                    .publishPercentileHistogram()
                    .minimumExpectedValue(Duration.ofMillis(1))
                    .maximumExpectedValue(Duration.ofSeconds(10))
                    .register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  public void claimed(String shape) {
    claims
        .computeIfAbsent(
            shape,
            s ->
                Counter.builder("warmmetal.claims")
                    .description("Machines claimed by launches")
                    .tag("shape", s)
                    .register(registry))
        .increment();
  }

  public void poolDeficit(String shape, int deficit) {
    deficits
        .computeIfAbsent(
            shape,
            s -> registry.gauge("warmmetal.pool.deficit", Tags.of("shape", s), new AtomicInteger()))
        .set(deficit);
  }

  public void machineCounts(Map<String, Map<String, Long>> byShapeAndState) {
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    byShapeAndState.forEach(
        (shape, states) ->
            states.forEach(
                (state, n) ->
                    rows.add(MultiGauge.Row.of(Tags.of("shape", shape, "state", state), n))));
    machines.register(rows, true);
  }

  /** Agents holding a channel to this replica now (sum over replicas for the fleet's). */
  public void agentsConnected(IntSupplier connected) {
    Gauge.builder("warmmetal.agents.connected", connected::getAsInt)
        .description("Agents connected to this replica's channel")
        .register(registry);
  }

  /**
   * A port's open connections and the connections its caps refused ({@code port}: api, agents,
   * management).
   */
  public void connections(String port, IntSupplier open, LongSupplier refused) {
    Gauge.builder("warmmetal.connections.open", open::getAsInt)
        .description(
            "Open connections of this replica's port (capped by WARMMETAL_*_MAX_CONNECTIONS)")
        .tag("port", port)
        .register(registry);
    counted.add(refused);
    FunctionCounter.builder("warmmetal.connections.refused", refused, LongSupplier::getAsLong)
        .description(
            "Connections refused because a connection cap was reached (total or per address at"
                + " accept, per client certificate after the TLS handshake)")
        .tag("port", port)
        .register(registry);
  }

  /**
   * The answers of launches that launched, as {@code
   * warmmetal_launch_duration_seconds{outcome="launched"}}: counts cumulative by ascending bound,
   * as Prometheus's buckets.
   */
  public LatencyHistogram launchedLatency() {
    Timer launched = launchTimers.get(LAUNCHED);
    if (launched == null) {
      return new LatencyHistogram(0, 0, List.of());
    }
    HistogramSnapshot snapshot = launched.takeSnapshot();
    List<LatencyHistogram.Bucket> buckets =
        Arrays.stream(snapshot.histogramCounts())
            .map(c -> new LatencyHistogram.Bucket(c.bucket(TimeUnit.SECONDS), (long) c.count()))
            .toList();
    return new LatencyHistogram(snapshot.count(), snapshot.total(TimeUnit.SECONDS), buckets);
  }

  /**
   * A latency histogram: how many, their total seconds, and cumulative counts by upper bound in
   * seconds.
   */
  public record LatencyHistogram(long count, double sumSeconds, List<Bucket> buckets) {
    public record Bucket(double leSeconds, long count) {}
  }

  /** The Prometheus text exposition. */
  public String scrape() {
    return registry.scrape();
  }
}
