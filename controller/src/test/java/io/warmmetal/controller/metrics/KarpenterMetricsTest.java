package io.warmmetal.controller.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Upstream's metric names and labels, as Prometheus scrapes them from the controller's endpoint.
 */
class KarpenterMetricsTest {
  private final KarpenterMetrics metrics = new KarpenterMetrics();

  @Test
  void countersAndGaugesCarryUpstreamsNamesAndLabels() {
    metrics.nodeClaimCreated("default", "provisioned");
    metrics.nodeClaimCreated("default", "provisioned");
    metrics.nodeClaimTerminated("default", "on-demand", "rack-1");
    metrics.nodeClaimDisrupted("empty", "default", "WhenEmptyOrUnderutilized", "graceful");
    metrics.nodeCreated("default", "rack-1");
    metrics.nodeTerminated("default", "rack-1");
    metrics.disruptionDecision("delete", "underutilized", "single");
    metrics.scheduled(Duration.ofMillis(3));
    metrics.pending(7, 2);
    metrics.clusterNodes(4);
    metrics.nodePools(
        Map.of("default", Map.of("cpu", 16.0, "nodes", 1.0)),
        Map.of("default", Map.of("cpu", 1000.0)));
    metrics.eligibleNodes(Map.of("empty", 1));
    String text = metrics.scrape();
    expect(
        text,
        2.0,
        "karpenter_nodeclaims_created_total",
        "min_values_relaxed",
        "false",
        "nodepool",
        "default",
        "reason",
        "provisioned");
    expect(
        text,
        1.0,
        "karpenter_nodeclaims_terminated_total",
        "capacity_type",
        "on-demand",
        "nodepool",
        "default",
        "zone",
        "rack-1");
    expect(
        text,
        1.0,
        "karpenter_nodeclaims_disrupted_total",
        "capacity_type",
        "on-demand",
        "consolidation_policy",
        "WhenEmptyOrUnderutilized",
        "nodepool",
        "default",
        "reason",
        "empty",
        "termination_mode",
        "graceful");
    expect(text, 1.0, "karpenter_nodes_created_total", "nodepool", "default", "zone", "rack-1");
    expect(text, 1.0, "karpenter_nodes_terminated_total", "nodepool", "default", "zone", "rack-1");
    expect(
        text,
        1.0,
        "karpenter_voluntary_disruption_decisions_total",
        "consolidation_type",
        "single",
        "decision",
        "delete",
        "reason",
        "underutilized");
    expect(
        text,
        1.0,
        "karpenter_scheduler_scheduling_duration_seconds_bucket",
        "controller",
        "provisioner",
        "le",
        "0.005");
    expect(
        text,
        1.0,
        "karpenter_scheduler_scheduling_duration_seconds_count",
        "controller",
        "provisioner");
    expect(
        text,
        7.0,
        "karpenter_scheduler_queue_depth",
        "controller",
        "provisioner",
        "scheduling_id",
        "");
    expect(text, 2.0, "karpenter_scheduler_unschedulable_pods_count", "controller", "provisioner");
    expect(text, 4.0, "karpenter_cluster_state_node_count");
    expect(text, 16.0, "karpenter_nodepools_usage", "nodepool", "default", "resource_type", "cpu");
    expect(
        text, 1000.0, "karpenter_nodepools_limit", "nodepool", "default", "resource_type", "cpu");
    expect(text, 1.0, "karpenter_voluntary_disruption_eligible_nodes", "reason", "empty");
    // A pool gone is gone from the gauges.
    metrics.nodePools(Map.of(), Map.of());
    assertThat(metrics.scrape()).doesNotContain("karpenter_nodepools_usage{");
  }

  private static void expect(String text, double value, String name, String... labels) {
    assertThat(sample(text, name, labels))
        .as("%s %s", name, Arrays.toString(labels))
        .isEqualTo(value);
  }

  /**
   * The value of the sample of that name with exactly these labels, as Prometheus would parse it;
   * null if none.
   */
  static Double sample(String text, String name, String... labels) {
    Map<String, String> wanted = new HashMap<>();
    for (int i = 0; i < labels.length; i += 2) {
      wanted.put(labels[i], labels[i + 1]);
    }
    Pattern line = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})? (\\S+)$");
    Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
    for (String l : text.split("\n")) {
      var m = line.matcher(l);
      if (!m.matches() || !m.group(1).equals(name)) {
        continue;
      }
      Map<String, String> got = new HashMap<>();
      var lm = label.matcher(m.group(3) == null ? "" : m.group(3));
      while (lm.find()) {
        got.put(lm.group(1), lm.group(2));
      }
      if (got.equals(wanted)) {
        return Double.parseDouble(m.group(4));
      }
    }
    return null;
  }

  @Test
  void theEndpointServesMetricsHealthAndReadiness() throws Exception {
    AtomicBoolean ready = new AtomicBoolean(true);
    metrics.nodeClaimCreated("default", "provisioned");
    try (MetricsServer server = MetricsServer.start("127.0.0.1", 0, metrics, ready::get)) {
      HttpClient http = HttpClient.newHttpClient();
      String base = "http://127.0.0.1:" + server.port();
      HttpResponse<String> scrape =
          http.send(
              HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(scrape.statusCode()).isEqualTo(200);
      assertThat(scrape.headers().firstValue("Content-Type"))
          .hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
      assertThat(scrape.body()).contains("karpenter_nodeclaims_created_total");
      assertThat(
              http.send(
                      HttpRequest.newBuilder(URI.create(base + "/healthz")).build(),
                      HttpResponse.BodyHandlers.ofString())
                  .statusCode())
          .isEqualTo(200);
      assertThat(
              http.send(
                      HttpRequest.newBuilder(URI.create(base + "/readyz")).build(),
                      HttpResponse.BodyHandlers.ofString())
                  .statusCode())
          .isEqualTo(200);
      ready.set(false);
      assertThat(
              http.send(
                      HttpRequest.newBuilder(URI.create(base + "/readyz")).build(),
                      HttpResponse.BodyHandlers.ofString())
                  .statusCode())
          .isEqualTo(503);
      assertThat(
              http.send(
                      HttpRequest.newBuilder(URI.create(base + "/metrics"))
                          .POST(HttpRequest.BodyPublishers.ofString("x"))
                          .build(),
                      HttpResponse.BodyHandlers.ofString())
                  .statusCode())
          .isEqualTo(405);
    }
  }
}
