package io.warmmetal.api.monitoring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.Alertmanager;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.Prometheus;
import io.warmmetal.controller.metrics.MetricsServer;
import io.warmmetal.protocol.testing.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped monitoring against a real Prometheus and Alertmanager (Debian's): Prometheus scrapes
 * a running API's management port and the controller's metrics endpoint under the job names the
 * rules and dashboards expect; every query of both dashboards returns series; and a pool deficit
 * the launches cause fires {@code WarmMetalPoolDeficit}, which Alertmanager receives and sends on
 * to its webhook — after the rule was evaluated with nothing to fire on before the launches.
 *
 * <p>The rules are the shipped ones with every {@code for:} cut to 0s: how long each waits is what
 * {@code promtool test rules} checks ({@link AlertRulesTest}); this test checks the wiring.
 */
@Tag("processes")
@ExtendWith(VertxExtension.class)
class PrometheusTest {
  private static final String API_JOB = "warmmetal-api-metrics";
  private static final String CONTROLLER_JOB = "warmmetal-controller";

  @Test
  void prometheusScrapesBothEveryPanelHasSeriesAndAPoolDeficitReachesAlertmanager(
      Vertx vertx, @TempDir Path dir) throws Exception {
    Path rules = dir.resolve("warmmetal-alerts.yaml");
    Files.writeString(
        rules,
        Files.readString(AlertRulesTest.RULES).replaceAll("(?m)^(\\s+)for: \\S+$", "$1for: 0s"));
    try (ApiFixture fx = MonitoredFleet.start(vertx, 2);
        MetricsServer controller =
            MetricsServer.start("127.0.0.1", 0, MonitoredFleet.controllerMetrics(), () -> true);
        Alertmanager alertmanager = Alertmanager.start(dir);
        Prometheus prometheus =
            Prometheus.start(
                dir,
                Map.of(
                    API_JOB, "127.0.0.1:" + fx.api.metricsPort(),
                    CONTROLLER_JOB, "127.0.0.1:" + controller.port()),
                List.of(rules),
                alertmanager.address())) {
      MonitoredFleet.pool(fx, 2); // two warm machines for a pool of two: no deficit
      Await.until(
          "both targets scraped",
          () -> value(prometheus, "sum(up{job=~\"" + API_JOB + "|" + CONTROLLER_JOB + "\"})") == 2,
          60_000,
          prometheus::logTail);
      Await.until(
          "the pool's deficit (0) scraped",
          () -> value(prometheus, "max(warmmetal_pool_deficit)") == 0,
          60_000,
          prometheus::logTail);
      long before = prometheus.ruleEvaluations();
      Await.until(
          "three rule evaluations with the deficit scraped",
          () -> value(prometheus, "min(prometheus_rule_group_iterations_total)") >= before + 3,
          60_000,
          prometheus::logTail);
      assertThat(prometheus.query("ALERTS{alertname=\"WarmMetalPoolDeficit\"}"))
          .as("no deficit, no alert")
          .isEmpty();

      // The launches take both warm machines, and nothing is left to refill the pool.
      MonitoredFleet.launch(fx, 201);
      MonitoredFleet.launch(fx, 201);
      MonitoredFleet.launch(fx, 503);
      fx.reconcilePools();

      Await.until(
          "Alertmanager holds WarmMetalPoolDeficit for " + MonitoredFleet.SHAPE,
          () -> holds(alerts(alertmanager), "WarmMetalPoolDeficit", SHAPE),
          60_000,
          () -> prometheus.logTail() + "\n" + alertmanager.logTail());
      Await.until(
          "the webhook is sent WarmMetalPoolDeficit, firing",
          () ->
              alertmanager.notifications().stream()
                  .anyMatch(
                      n ->
                          n.path("status").asText().equals("firing")
                              && holds(n.path("alerts"), "WarmMetalPoolDeficit", SHAPE)),
          60_000,
          alertmanager::logTail);

      // Every panel's and variable's query returns series once rates have two scrapes to go on.
      List<String> withoutSeries = new ArrayList<>();
      Map<String, String> queries = new TreeMap<>();
      try (Stream<Path> files = Files.list(AlertRulesTest.MONITORING)) {
        for (Path dashboard : files.filter(p -> p.toString().endsWith(".json")).toList()) {
          queries.putAll(MonitoringFilesTest.dashboardQueries(dashboard));
        }
      }
      assertThat(queries).hasSizeGreaterThan(80);
      for (Map.Entry<String, String> query : queries.entrySet()) {
        String promql =
            query
                .getValue()
                .replace("$__rate_interval", "1m")
                .replace("$__range", "5m")
                .replace("$shape", ".*");
        try {
          Await.until(
              query.getKey() + " returns series", () -> hasSeries(prometheus, promql), 15_000);
        } catch (AssertionError e) {
          withoutSeries.add(query.getKey() + ": " + promql);
        }
      }
      assertThat(withoutSeries).as("dashboard queries without series").isEmpty();
    }
  }

  private static final String SHAPE = MonitoredFleet.SHAPE;

  private static boolean holds(JsonNode alerts, String name, String shape) {
    for (JsonNode alert : alerts) {
      JsonNode labels = alert.path("labels");
      if (labels.path("alertname").asText().equals(name)
          && labels.path("shape").asText().equals(shape)
          && labels.path("severity").asText().equals("warning")) {
        return true;
      }
    }
    return false;
  }

  // Await's conditions cannot throw: a failed ask is "not yet" (an unanswered query), and a query
  // Prometheus refuses fails the test.

  private static double value(Prometheus prometheus, String promql) {
    try {
      return prometheus.value(promql);
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  private static boolean hasSeries(Prometheus prometheus, String promql) {
    try {
      return !prometheus.query(promql).isEmpty();
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static JsonNode alerts(Alertmanager alertmanager) {
    try {
      return alertmanager.alerts();
    } catch (IOException e) {
      return MissingNode.getInstance();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return MissingNode.getInstance();
    }
  }
}
