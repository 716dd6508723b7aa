package io.warmmetal.api.instances;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.metrics.FleetMetrics;

/**
 * {@code GET /v1/launch-latency}: the launches' answer times as this replica counted them, for the
 * fleet console — the histogram Prometheus reads on the management port, here behind a token since
 * the API port is the one clients reach.
 */
public final class LaunchLatencyRoutes {
  private LaunchLatencyRoutes() {}

  public static void mount(Operations ops, FleetMetrics metrics) {
    ops.json(
        "getLaunchLatency", 200, ctx -> Future.succeededFuture(json(metrics.launchedLatency())));
  }

  static JsonObject json(FleetMetrics.LatencyHistogram histogram) {
    JsonArray buckets = new JsonArray();
    histogram
        .buckets()
        .forEach(
            b ->
                buckets.add(
                    new JsonObject().put("leSeconds", b.leSeconds()).put("launches", b.count())));
    return new JsonObject()
        .put("launches", histogram.count())
        .put("sumSeconds", histogram.sumSeconds())
        .put("buckets", buckets);
  }
}
