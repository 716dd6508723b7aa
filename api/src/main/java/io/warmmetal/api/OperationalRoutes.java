package io.warmmetal.api;

import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import io.warmmetal.api.http.ErrorResponses;
import io.warmmetal.api.http.Json;
import io.warmmetal.api.metrics.FleetMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code /healthz} (the process answers), {@code /readyz} (the database answers) and Prometheus {@code /metrics}. */
final class OperationalRoutes {
  private static final Logger LOG = LoggerFactory.getLogger(OperationalRoutes.class);
  private OperationalRoutes() {}

  static void mount(Router router, Pool db, FleetMetrics metrics) {
    router.get("/healthz").handler(ctx -> Json.ok(ctx, new JsonObject().put("status", "ok")));
    router.get("/readyz").handler(ctx -> db.query("SELECT 1").execute()
        .onSuccess(x -> Json.ok(ctx, new JsonObject().put("status", "ready")))
        .onFailure(err -> {
          LOG.warn("Not ready: the database does not answer: {}", err.getMessage());
          ErrorResponses.send(ctx, ApiError.of(ErrorCode.ServiceUnavailable, "the database does not answer"));
        }));
    router.get("/metrics").handler(ctx -> ctx.response()
        .putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        .end(metrics.scrape()));
  }
}
