package io.warmmetal.api;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.db.TransientFailures;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import io.warmmetal.api.http.ErrorResponses;
import io.warmmetal.api.http.Json;
import io.warmmetal.api.http.OutageLog;
import io.warmmetal.api.lifecycle.Lookups;
import io.warmmetal.api.metrics.FleetMetrics;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code /healthz} (the process answers) and {@code /readyz} (the database answers), on the API
 * port and the management port; Prometheus {@code /metrics} on the management port only (it counts
 * every project's machines by shape, so it stays off the port clients reach).
 */
final class OperationalRoutes {
  private static final Logger LOG = LoggerFactory.getLogger(OperationalRoutes.class);

  /** Probes come every few seconds: one line per outage, not one per probe. */
  private static final OutageLog NOT_READY =
      new OutageLog(
          LOG, "Not ready: the database does not answer", "probes", Duration.ofSeconds(60));

  private static final long COUNT_WAIT_MILLIS = 2000;

  private OperationalRoutes() {}

  /**
   * The probes: what they say (alive; the database answers) is no secret, so they are on both
   * ports.
   */
  static void mountProbes(Router router, Pool db) {
    router.get("/healthz").handler(ctx -> Json.ok(ctx, new JsonObject().put("status", "ok")));
    router
        .get("/readyz")
        .handler(
            ctx ->
                db.query("SELECT 1")
                    .execute()
                    .onSuccess(x -> Json.ok(ctx, new JsonObject().put("status", "ready")))
                    .onFailure(
                        err -> {
                          NOT_READY.failed(err);
                          ErrorResponses.send(
                              ctx,
                              ApiError.of(
                                  ErrorCode.ServiceUnavailable, "the database does not answer"));
                        }));
  }

  /** The management port: the probes and the metrics. */
  static void mountManagement(Router router, Pool db, FleetMetrics metrics) {
    mountProbes(router, db);
    MachineCounts counts = new MachineCounts(db, metrics);
    // A scrape waits for a fresh count a moment at most: a replica whose database pool is swamped
    // still reports its
    // gauges (the machine counts as last counted) within Prometheus's scrape timeout.
    router
        .get("/metrics")
        .handler(
            ctx ->
                counts
                    .refresh()
                    .timeout(COUNT_WAIT_MILLIS, TimeUnit.MILLISECONDS)
                    .onComplete(
                        x ->
                            ctx.response()
                                .putHeader(
                                    "Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                                .end(metrics.scrape())));
  }

  /**
   * The machines-per-shape-and-state gauges, counted when scraped: the count reads every machine,
   * so it runs only when someone looks, at most once a second however often they do. A failed count
   * leaves the last one (the database's state shows in /readyz).
   */
  private static final class MachineCounts {
    private static final long EVERY_NANOS = 1_000_000_000L;
    private final Pool db;
    private final FleetMetrics metrics;
    private long countedAt;
    private Future<Void> counting;

    MachineCounts(Pool db, FleetMetrics metrics) {
      this.db = db;
      this.metrics = metrics;
    }

    synchronized Future<Void> refresh() {
      long now = System.nanoTime();
      if (counting == null || (counting.isComplete() && now - countedAt >= EVERY_NANOS)) {
        countedAt = now;
        counting =
            Lookups.machineCounts(db)
                .onSuccess(metrics::machineCounts)
                .onFailure(
                    err -> {
                      if (!TransientFailures.isTransient(
                          err)) { // an outage shows in /readyz already
                        LOG.warn("Could not count machines for /metrics: {}", err.getMessage());
                      }
                    })
                .mapEmpty();
      }
      return counting;
    }
  }
}
