package io.warmmetal.api.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.config.ApiConfig;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.protocol.testing.Await;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Health, readiness and the Prometheus metrics an operator scrapes: the metrics on the management
 * port only (they count every project's machines by shape), the probes on both ports; the
 * launch-latency histogram the console draws, behind a token on the API port.
 */
@ExtendWith(VertxExtension.class)
class OperationsTest {

  @Test
  void metricsCountLaunchesClaimsAndMachines(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      fx.registerMachines(2, ApiFixture.facts(8, 32), true);
      fx.client.post(
          "/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", "x86-8c-32g"));
      fx.client.post(
          "/v1/instances",
          ApiFixture.ADMIN,
          new JsonObject().put("shape", "x86-8c-32g").put("minCount", 5));
      // A scrape counts the machines, at most once a second: scrape until the gauges show the
      // launch.
      Response[] scraped = new Response[1];
      Await.until(
          "the gauges show the launch",
          () -> {
            scraped[0] = fx.management.get("/metrics", null);
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
          .contains("warmmetal_machines{shape=\"x86-8c-32g\",state=\"joining\"} 1.0")
          // Every state of a shape with machines has a series, 0 where none (not "no data").
          .contains("warmmetal_machines{shape=\"x86-8c-32g\",state=\"failed\"} 0.0")
          .contains("warmmetal_machines{shape=\"x86-8c-32g\",state=\"offline\"} 0.0");

      // The console's view of the same histogram: one launch, cumulative counts, every bucket a
      // bound of /metrics.
      JsonObject latency = fx.client.get("/v1/launch-latency", ApiFixture.ADMIN).body();
      assertThat(latency.getLong("launches")).isEqualTo(1);
      assertThat(latency.getDouble("sumSeconds")).isPositive();
      JsonArray buckets = latency.getJsonArray("buckets");
      assertThat(buckets).isNotEmpty();
      long previous = 0;
      for (int i = 0; i < buckets.size(); i++) {
        JsonObject bucket = buckets.getJsonObject(i);
        assertThat(bucket.getLong("launches")).isGreaterThanOrEqualTo(previous);
        previous = bucket.getLong("launches");
        assertThat(metrics.raw())
            .contains(
                "warmmetal_launch_duration_seconds_bucket{outcome=\"launched\",le=\""
                    + bucket.getDouble("leSeconds")
                    + "\"} "
                    + previous);
      }
      assertThat(previous).isEqualTo(1); // the launch took less than the last bound (10 s)
    }
  }

  @Test
  void metricsAreOnTheManagementPortAndNotOnTheApiPort(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      assertThat(fx.api.metricsPort()).isPositive().isNotEqualTo(fx.api.port());
      Response onApiPort = fx.client.get("/metrics", ApiFixture.ADMIN);
      assertThat(onApiPort.status()).isEqualTo(404);
      assertThat(onApiPort.errorCode()).isEqualTo("NotFound");
      assertThat(onApiPort.body().getString("requestId")).isNotBlank();

      Response scraped = fx.management.get("/metrics", null);
      assertThat(scraped.status()).isEqualTo(200);
      assertThat(scraped.headers().get("Content-Type")).startsWith("text/plain");
      assertThat(scraped.raw()).contains("# TYPE warmmetal_agents_connected gauge");
      assertThat(fx.management.get("/healthz", null).status()).isEqualTo(200);
      assertThat(fx.management.get("/readyz", null).status()).isEqualTo(200);

      // The management port serves nothing else: not the API, not the console, in the one error
      // shape.
      WebClient raw = WebClient.create(vertx);
      for (String path : new String[] {"/v1/instances", "/console/", "/v1/launch-latency"}) {
        var answer =
            raw.get(fx.api.metricsPort(), "127.0.0.1", path)
                .putHeader("Authorization", "Bearer " + ApiFixture.ADMIN)
                .send()
                .await();
        assertThat(answer.statusCode()).as(path).isEqualTo(404);
        assertThat(answer.bodyAsJsonObject().getString("code")).as(path).isEqualTo("NotFound");
      }
      raw.close();
    }
  }

  @Test
  void theManagementPortMustBeAPortOfItsOwn() {
    assertThatThrownBy(() -> ApiConfig.fromEnv(Map.of("WARMMETAL_METRICS_PORT", "8080")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("WARMMETAL_METRICS_PORT must differ from WARMMETAL_HTTP_PORT, both are 8080");
    assertThatThrownBy(
            () ->
                ApiConfig.fromEnv(
                    Map.of("WARMMETAL_METRICS_PORT", "7000", "WARMMETAL_AGENT_PORT", "7000")))
        .hasMessage("WARMMETAL_AGENT_PORT must differ from WARMMETAL_METRICS_PORT, both are 7000");
    assertThat(
            ApiConfig.fromEnv(Map.of("WARMMETAL_HTTP_PORT", "0", "WARMMETAL_METRICS_PORT", "0"))
                .metricsPort())
        .isZero(); // free ports, picked apart
    assertThat(ApiConfig.fromEnv(Map.of("WARMMETAL_HTTP_HOST", "10.0.0.5")).metricsHost())
        .isEqualTo("10.0.0.5");
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
      assertThat(fx.management.get("/readyz", null).status()).isEqualTo(503);
      assertThat(fx.management.get("/healthz", null).status()).isEqualTo(200);
    } finally {
      fx.close();
    }
  }
}
