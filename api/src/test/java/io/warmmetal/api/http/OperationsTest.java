package io.warmmetal.api.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Health, readiness and the Prometheus metrics an operator scrapes. */
@ExtendWith(VertxExtension.class)
class OperationsTest {

  @Test
  void metricsCountLaunchesClaimsAndMachines(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      fx.registerMachines(2, ApiFixture.facts(8, 32), true);
      fx.client.post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", "x86-8c-32g"));
      fx.client.post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", "x86-8c-32g").put("minCount", 5));
      // A scrape counts the machines, at most once a second: scrape until the gauges show the launch.
      Response[] scraped = new Response[1];
      Await.until("the gauges show the launch", () -> {
        scraped[0] = fx.client.get("/metrics", null);
        return scraped[0].raw().contains("state=\"joining\"} 1.0");
      });
      Response metrics = scraped[0];
      assertThat(metrics.headers().get("Content-Type")).startsWith("text/plain");
      assertThat(metrics.raw())
          .contains("warmmetal_launch_duration_seconds_count{outcome=\"launched\"} 1")
          .contains("warmmetal_launch_duration_seconds_count{outcome=\"InsufficientCapacity\"} 1")
          .contains("warmmetal_launch_duration_seconds_bucket{outcome=\"launched\",le=")
          .contains("warmmetal_claims_total{shape=\"x86-8c-32g\"} 1.0")
          .contains("warmmetal_machines{shape=\"x86-8c-32g\",state=\"warm\"} 1.0")
          .contains("warmmetal_machines{shape=\"x86-8c-32g\",state=\"joining\"} 1.0");
    }
  }

  @Test
  void readinessFollowsTheDatabase(Vertx vertx) throws Exception {
    ApiFixture fx = ApiFixture.start(vertx);
    try {
      assertThat(fx.client.get("/healthz", null).body().getString("status")).isEqualTo("ok");
      assertThat(fx.client.get("/readyz", null).status()).isEqualTo(200);
      // Cut the server's database connections off: not ready, though still alive.
      fx.db().close().await();
      Response notReady = fx.client.get("/readyz", null);
      assertThat(notReady.status()).isEqualTo(503);
      assertThat(notReady.errorCode()).isEqualTo("ServiceUnavailable");
      assertThat(fx.client.get("/healthz", null).status()).isEqualTo(200);
    } finally {
      fx.close();
    }
  }
}
