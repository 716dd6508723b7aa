package io.warmmetal.controller.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.warmmetal.controller.testing.MovingClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
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
    metrics.disruptionDecision(List.of("default"), "delete", "underutilized", "single");
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

  @Test
  void nodeRepairsAreCountedUnderUpstreamsNameLabelsAndHelp() {
    metrics.nodeClaimUnhealthyDisrupted("ready", "default", "on-demand", "");
    String text = metrics.scrape();
    expect(
        text,
        1.0,
        "karpenter_nodeclaims_unhealthy_disrupted_total",
        "capacity_type",
        "on-demand",
        "condition",
        "ready",
        "image_id",
        "",
        "nodepool",
        "default");
    assertThat(text)
        .contains(
            "# HELP karpenter_nodeclaims_unhealthy_disrupted_total Number of unhealthy nodeclaims"
                + " disrupted in total by Karpenter. Labeled by condition on the node was disrupted,"
                + " the owning nodepool, and the image ID.");
  }

  @Test
  void budgetsConsumedAndConsolidationTimeoutsCarryUpstreamsNamesAndLabels() {
    assertThat(metrics.scrape())
        .as("both consolidation types there from the start")
        .contains(
            "karpenter_voluntary_disruption_consolidation_timeouts_total{consolidation_type=\"multi\",} 0.0")
        .contains(
            "karpenter_voluntary_disruption_consolidation_timeouts_total{consolidation_type=\"single\",} 0.0");
    metrics.consolidationTimedOut("single");
    metrics.pendingByEffectiveZone(Map.of("rack-1", 3, "flexible", 2));
    metrics.nodesConsumingBudgets(Map.of("default", 2), List.of("Empty", "Drifted"));
    assertThat(metrics.scrape())
        .contains(
            "karpenter_voluntary_disruption_consolidation_timeouts_total{consolidation_type=\"single\",} 1.0")
        .contains(
            "karpenter_nodepools_nodes_consuming_budgets{nodepool=\"default\",reason=\"Empty\",} 2.0")
        .contains(
            "karpenter_nodepools_nodes_consuming_budgets{nodepool=\"default\",reason=\"Drifted\",} 2.0")
        .contains(
            "karpenter_scheduler_pending_pods_by_effective_zone_count{controller=\"provisioner\",zone=\"rack-1\",} 3.0")
        .contains(
            "karpenter_scheduler_pending_pods_by_effective_zone_count{controller=\"provisioner\",zone=\"flexible\",} 2.0");
  }

  @Test
  void aPodsProvisioningIsTimedFromWhenItWasSeenAndFromWhenItCouldScheduleAsUpstreamTimesIt() {
    MovingClock clock = new MovingClock(Instant.parse("2026-12-02T12:00:00Z"));
    KarpenterMetrics timed = new KarpenterMetrics(clock);
    Pod web =
        new PodBuilder()
            .withNewMetadata()
            .withName("web")
            .withNamespace("shop")
            .endMetadata()
            .build();
    timed.podsPending(List.of(web));
    clock.advance(Duration.ofSeconds(1));
    assertThat(timed.scrape())
        .contains(
            "karpenter_pods_provisioning_scheduling_undecided_time_seconds{name=\"web\",namespace=\"shop\",} 1.0");
    timed.podsDecided(List.of(), List.of(web)); // no place yet: decided all the same
    clock.advance(Duration.ofSeconds(1));
    timed.podsPending(List.of(web));
    timed.podsDecided(List.of(web), List.of()); // a place, two seconds after it was seen
    clock.advance(Duration.ofSeconds(3));
    String waiting = timed.scrape();
    assertThat(waiting)
        .contains("karpenter_pods_scheduling_decision_duration_seconds_count 1.0")
        .contains("karpenter_pods_scheduling_decision_duration_seconds_sum 1.0")
        .doesNotContain("karpenter_pods_provisioning_scheduling_undecided_time_seconds{")
        .contains(
            "karpenter_pods_provisioning_unbound_time_seconds{name=\"web\",namespace=\"shop\",} 3.0")
        .contains(
            "karpenter_pods_provisioning_unstarted_time_seconds{name=\"web\",namespace=\"shop\",} 3.0");
    timed.podBoundNow(web);
    clock.advance(Duration.ofSeconds(4));
    timed.podStartedNow(web);
    String done = timed.scrape();
    assertThat(done)
        .contains("karpenter_pods_provisioning_bound_duration_seconds_sum 3.0")
        .contains("karpenter_pods_provisioning_startup_duration_seconds_sum 7.0")
        .contains("karpenter_pods_provisioning_startup_duration_seconds_bucket{le=\"10.0\",} 1.0")
        .doesNotContain("karpenter_pods_provisioning_unstarted_time_seconds{")
        .doesNotContain("_created");
  }

  @Test
  void theClusterGaugesSayWhatEachNodeHasAndRunsAndEachPodsState() {
    Node node =
        new NodeBuilder()
            .withNewMetadata()
            .withName("wm-1")
            .withLabels(Map.of("karpenter.sh/nodepool", "default", "kubernetes.io/arch", "amd64"))
            .endMetadata()
            .withNewStatus()
            .withCapacity(Map.of("cpu", new Quantity("16"), "memory", new Quantity("64Gi")))
            .withAllocatable(Map.of("cpu", new Quantity("15900m"), "memory", new Quantity("63Gi")))
            .endStatus()
            .build();
    metrics.observeCluster(
        List.of(node), List.of(pod("web", "ReplicaSet", "wm-1"), pod("logs", "DaemonSet", "wm-1")));
    String text = metrics.scrape();
    String[] wm1 = {
      "nodepool",
      "default",
      "zone",
      "",
      "region",
      "",
      "instance_type",
      "",
      "arch",
      "amd64",
      "os",
      "",
      "capacity_type",
      "",
      "windows_build",
      "",
      "node_name",
      "wm-1",
      "phase",
      "",
      "managed",
      "true"
    };
    expect(text, 15.9, "karpenter_nodes_allocatable", with(wm1, "resource_type", "cpu"));
    expect(text, 1.0, "karpenter_nodes_total_pod_requests", with(wm1, "resource_type", "cpu"));
    expect(text, 0.5, "karpenter_nodes_total_daemon_requests", with(wm1, "resource_type", "cpu"));
    expect(text, 0.1, "karpenter_nodes_system_overhead", with(wm1, "resource_type", "cpu"));
    expect(
        text,
        1.0,
        "karpenter_pods_state",
        "name",
        "web",
        "namespace",
        "default",
        "owner",
        "ReplicaSet/web",
        "node",
        "wm-1",
        "scheduled",
        "true",
        "nodepool",
        "default",
        "zone",
        "",
        "arch",
        "amd64",
        "capacity_type",
        "",
        "instance_type",
        "",
        "phase",
        "Running",
        "ready",
        "false",
        "managed",
        "true");
  }

  private static String[] with(String[] labels, String... more) {
    String[] all = Arrays.copyOf(labels, labels.length + more.length);
    System.arraycopy(more, 0, all, labels.length, more.length);
    return all;
  }

  private static Pod pod(String name, String ownerKind, String node) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("default")
        .addNewOwnerReference()
        .withKind(ownerKind)
        .withName(name)
        .withController(true)
        .endOwnerReference()
        .endMetadata()
        .withNewSpec()
        .withNodeName(node)
        .addNewContainer()
        .withName("app")
        .withNewResources()
        .addToRequests("cpu", new Quantity("500m"))
        .endResources()
        .endContainer()
        .endSpec()
        .withNewStatus()
        .withPhase("Running")
        .endStatus()
        .build();
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
