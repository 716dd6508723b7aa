package io.warmmetal.controller.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Upstream's published Grafana dashboards, read verbatim (test resources, {@code SOURCE.md}), light
 * up against this controller: every metric each PromQL expression names is served, with every label
 * it selects on or groups by, after a small cluster's worth of events. Series Prometheus adds
 * itself ({@code job}, {@code cluster}) and node-exporter's are not ours.
 */
class DashboardsTest {
  private static final Pattern METRIC =
      Pattern.compile("\\b((?:karpenter|controller_runtime|workqueue)_[a-z_]+)(\\{([^}]*)\\})?");
  private static final Pattern SELECTOR_LABEL = Pattern.compile("([a-z_]+)\\s*(=~|!~|!=|=)\\s*\"");
  private static final Pattern BY = Pattern.compile("\\bby\\s*\\(([^)]*)\\)");

  /** Labels Prometheus (not an exporter) adds, or dashboards make with label_replace. */
  private static final Set<String> NOT_EXPORTED = Set.of("job", "cluster", "instance", "node");

  /**
   * Upstream's own dashboard slips, kept as they are: the capacity dashboard groups disruption
   * decisions by a nodepool label that metric has never had (upstream's {@code
   * decisions_by_nodepool_total} has it).
   */
  private static final Map<String, Set<String>> UPSTREAM_SLIPS =
      Map.of("karpenter_voluntary_disruption_decisions_total", Set.of("nodepool"));

  private final KarpenterMetrics metrics = new KarpenterMetrics();

  /** What a small cluster's first minutes put into the metrics. */
  private String scrapeAfterSomeWork() {
    Node node =
        new NodeBuilder()
            .withNewMetadata()
            .withName("wm-1")
            .withCreationTimestamp("2026-12-02T12:00:00Z")
            .withLabels(
                Map.of(
                    "karpenter.sh/nodepool", "default",
                    "topology.kubernetes.io/zone", "rack-1",
                    "kubernetes.io/arch", "amd64",
                    "karpenter.sh/capacity-type", "on-demand",
                    "node.kubernetes.io/instance-type", "x86-16c-64g"))
            .endMetadata()
            .withNewStatus()
            .withCapacity(Map.of("cpu", new Quantity("16"), "memory", new Quantity("64Gi")))
            .withAllocatable(
                Map.of(
                    "cpu", new Quantity("15900m"),
                    "memory", new Quantity("63Gi"),
                    "pods", new Quantity("110")))
            .endStatus()
            .build();
    Pod web = pod("web", "ReplicaSet");
    Pod daemon = pod("logs", "DaemonSet");
    metrics.observeCluster(List.of(node), List.of(web, daemon));
    metrics.nodeCreated("default", "rack-1");
    metrics.nodeTerminated("default", "rack-1");
    metrics.nodeClaimDisrupted("empty", "default", "WhenEmptyOrUnderutilized", "graceful");
    metrics.eligibleNodes(Map.of("empty", 1));
    metrics.disruptionDecision(List.of("default"), "delete", "empty", "empty");
    metrics.nodePools(
        Map.of("default", Map.of("cpu", 16.0, "memory", 64.0 * (1L << 30))),
        Map.of("default", Map.of("cpu", 1000.0, "memory", 4000.0 * (1L << 30))));
    metrics.podStarted(Duration.ofSeconds(3));
    metrics.nodeTerminationDuration("default", Duration.ofSeconds(40));
    metrics.reconciled("provisioner", Duration.ofMillis(4), "success");
    metrics.reconciled("nodeclaim.lifecycle", Duration.ofMillis(2), "error");
    metrics.workQueue("nodeclaim.lifecycle", () -> 1);
    return metrics.scrape();
  }

  private static Pod pod(String name, String ownerKind) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("default")
        .withCreationTimestamp("2026-12-02T12:00:00Z")
        .addNewOwnerReference()
        .withKind(ownerKind)
        .withName(name)
        .withController(true)
        .endOwnerReference()
        .endMetadata()
        .withNewSpec()
        .withNodeName("wm-1")
        .addNewContainer()
        .withName("app")
        .withNewResources()
        .addToRequests("cpu", new Quantity("500m"))
        .addToRequests("memory", new Quantity("1Gi"))
        .endResources()
        .endContainer()
        .endSpec()
        .withNewStatus()
        .withPhase("Running")
        .endStatus()
        .build();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "karpenter-capacity-dashboard.json",
        "karpenter-performance-dashboard.json",
        "karpenter-controllers.json"
      })
  void everyQueryOfUpstreamsDashboardFindsItsMetricsAndLabels(String dashboard) throws Exception {
    String text = scrapeAfterSomeWork();
    Map<String, List<Map<String, String>>> served = samples(text);
    List<String> expressions = expressions(dashboard);
    assertThat(expressions).as("the dashboard's queries").isNotEmpty();
    int checked = 0;
    for (String expr : expressions) {
      Matcher m = METRIC.matcher(expr);
      Set<String> inExpr = new HashSet<>();
      while (m.find()) {
        String name = m.group(1);
        inExpr.add(name);
        assertThat(served).as("%s (in %s)", name, expr).containsKey(name);
        checked++;
        if (m.group(3) == null) {
          continue;
        }
        Matcher labels = SELECTOR_LABEL.matcher(m.group(3));
        while (labels.find()) {
          String label = labels.group(1);
          if (!NOT_EXPORTED.contains(label)) {
            assertThat(served.get(name))
                .as("%s selects on %s (in %s)", name, label, expr)
                .anyMatch(s -> s.containsKey(label));
          }
        }
        // A summary's quantiles as Go writes them: the performance dashboard selects "0" and "1".
        Matcher quantile = Pattern.compile("quantile\\s*=\\s*\"([^\"]+)\"").matcher(m.group(3));
        if (quantile.find()) {
          String q = quantile.group(1);
          assertThat(served.get(name))
              .as("%s has quantile %s", name, q)
              .anyMatch(s -> q.equals(s.get("quantile")));
        }
      }
      Matcher by = BY.matcher(expr);
      while (by.find()) {
        for (String label : by.group(1).split(",")) {
          String l = label.trim();
          if (l.isEmpty() || l.startsWith("$") || NOT_EXPORTED.contains(l)) {
            continue;
          }
          assertThat(inExpr)
              .as("some metric of %s has %s", expr, l)
              .anyMatch(
                  name ->
                      UPSTREAM_SLIPS.getOrDefault(name, Set.of()).contains(l)
                          || served.getOrDefault(name, List.of()).stream()
                              .anyMatch(s -> s.containsKey(l)));
        }
      }
    }
    assertThat(checked).as("metrics named by " + dashboard).isPositive();
  }

  /** Every PromQL expression of the dashboard: its panels' targets and its variables' queries. */
  private static List<String> expressions(String dashboard) throws Exception {
    try (InputStream in =
        DashboardsTest.class.getResourceAsStream("/upstream-dashboards/" + dashboard)) {
      List<String> found = new ArrayList<>();
      collect(new ObjectMapper().readTree(in), found);
      return found;
    }
  }

  private static void collect(JsonNode node, List<String> found) {
    if (node.isObject()) {
      node.fields()
          .forEachRemaining(
              e -> {
                if (("expr".equals(e.getKey()) || "query".equals(e.getKey()))
                    && e.getValue().isTextual()) {
                  found.add(e.getValue().asText());
                } else {
                  collect(e.getValue(), found);
                }
              });
    } else if (node.isArray()) {
      node.forEach(n -> collect(n, found));
    }
  }

  /** Each served series' labels, by its name, as Prometheus would parse the scrape. */
  private static Map<String, List<Map<String, String>>> samples(String text) {
    Pattern line = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})? (\\S+)$");
    Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
    Map<String, List<Map<String, String>>> byName = new HashMap<>();
    for (String l : text.split("\n")) {
      Matcher m = line.matcher(l);
      if (!m.matches()) {
        continue;
      }
      Map<String, String> labels = new HashMap<>();
      Matcher lm = label.matcher(m.group(3) == null ? "" : m.group(3));
      while (lm.find()) {
        labels.put(lm.group(1), lm.group(2));
      }
      byName.computeIfAbsent(m.group(1), n -> new ArrayList<>()).add(labels);
    }
    return byName;
  }
}
