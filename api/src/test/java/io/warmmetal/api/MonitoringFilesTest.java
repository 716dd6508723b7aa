package io.warmmetal.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.Await;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.yaml.snakeyaml.Yaml;

/**
 * The dashboards and alerts in {@code deploy/monitoring} read only metrics the code exports: every
 * name in their PromQL is one a running API's {@code /metrics} (on its management port) or the
 * controller's registry has (so a renamed metric fails here), and every metric family exported has
 * a panel.
 */
@ExtendWith(VertxExtension.class)
class MonitoringFilesTest {
  static final Path MONITORING = Path.of("..", "deploy", "monitoring");

  /** Prometheus's own series, which no exporter has. */
  private static final Set<String> PROMETHEUS_OWN = Set.of("up");

  private static final Set<String> KEYWORDS =
      Set.of(
          "by",
          "without",
          "on",
          "ignoring",
          "group_left",
          "group_right",
          "offset",
          "bool",
          "and",
          "or",
          "unless",
          "inf",
          "nan");
  private static final Pattern SAMPLE = Pattern.compile("(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]");
  private static final Pattern FAMILY = Pattern.compile("(?m)^# TYPE (\\S+) ");

  /**
   * The metric names a PromQL expression reads: identifiers that are neither functions, keywords
   * nor labels.
   */
  static Set<String> metricNames(String promql) {
    String s =
        promql
            .replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"") // strings: label values, regexes
            .replaceAll("\\{[^}]*}", "") // label matchers
            .replaceAll("\\[[^]]*]", "") // ranges
            .replaceAll(
                "\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)",
                " ") // label lists
            .replaceAll("\\$\\w+", " "); // Grafana variables outside strings
    Set<String> names = new TreeSet<>();
    Matcher m = Pattern.compile("(?<![\\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\\s*\\()?").matcher(s);
    while (m.find()) {
      if (m.group(2) == null && !KEYWORDS.contains(m.group(1).toLowerCase())) {
        names.add(m.group(1));
      }
    }
    return names;
  }

  /**
   * Every PromQL expression of a dashboard: its panels' targets and its query variables, by where
   * they stand.
   */
  static Map<String, String> dashboardQueries(Path file) throws Exception {
    JsonNode dashboard = new ObjectMapper().readTree(file.toFile());
    Map<String, String> queries = new TreeMap<>();
    for (JsonNode panel : dashboard.path("panels")) {
      for (JsonNode target : panel.path("targets")) {
        queries.put(
            file.getFileName()
                + " / "
                + panel.path("title").asText()
                + " / "
                + target.path("refId").asText(),
            target.path("expr").asText());
      }
    }
    for (JsonNode variable : dashboard.path("templating").path("list")) {
      if (variable.path("type").asText().equals("query")) {
        String query = variable.path("query").path("query").asText();
        Matcher values = Pattern.compile("label_values\\((.*),\\s*\\w+\\)").matcher(query);
        queries.put(
            file.getFileName() + " / $" + variable.path("name").asText(),
            values.matches() ? values.group(1) : query);
      }
    }
    return queries;
  }

  @SuppressWarnings("unchecked")
  static Map<String, String> alertQueries(Path file) throws Exception {
    Map<String, Object> rules = new Yaml().load(Files.readString(file));
    Map<String, String> queries = new TreeMap<>();
    for (Map<String, Object> group : (List<Map<String, Object>>) rules.get("groups")) {
      for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
        queries.put(
            file.getFileName() + " / " + rule.get("alert"), String.valueOf(rule.get("expr")));
      }
    }
    return queries;
  }

  /**
   * What a running API exports once it has machines, a pool, launches (one refused) and a scrape
   * behind it.
   */
  private static String apiMetrics(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      fx.registerMachines(2, ApiFixture.facts(8, 32), true);
      String shape = "x86-8c-32g";
      assertThat(
              fx.client
                  .put(
                      "/v1/pools/" + shape,
                      ApiFixture.ADMIN,
                      new JsonObject().put("minWarm", 3).put("maxWarm", 3))
                  .status())
          .isEqualTo(200);
      fx.reconcilePools(); // two machines for a pool of three: a deficit
      for (int status :
          new int[] {
            201, 201, 503
          }) { // two warm machines, three launches: one InsufficientCapacity
        assertThat(
                fx.client
                    .post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", shape))
                    .status())
            .isEqualTo(status);
      }
      // The machine counts are counted when scraped (a scrape waits for the count it starts, at
      // most one a second).
      String[] scraped = new String[1];
      Await.until(
          "the machine counts scraped",
          () -> {
            scraped[0] = fx.scrape();
            return scraped[0].contains("warmmetal_machines{");
          });
      return scraped[0];
    }
  }

  /** The controller's registry with every meter it has touched once. */
  private static String controllerMetrics() {
    KarpenterMetrics metrics = new KarpenterMetrics();
    metrics.nodeClaimCreated("default", "provisioned");
    metrics.nodeClaimTerminated("default", "on-demand", "rack-1");
    metrics.nodeClaimDisrupted("empty", "default", "WhenEmpty", "graceful");
    metrics.nodeClaimUnhealthyDisrupted("ready", "default", "on-demand", "");
    metrics.nodeCreated("default", "rack-1");
    metrics.nodeTerminated("default", "rack-1");
    metrics.disruptionDecision(List.of("default"), "delete", "empty", "single");
    metrics.scheduled(Duration.ofMillis(3));
    metrics.pending(1, 1);
    metrics.clusterNodes(1);
    metrics.nodePools(
        Map.of("default", Map.of("cpu", 8.0)), Map.of("default", Map.of("cpu", 64.0)));
    metrics.eligibleNodes(Map.of("empty", 1));
    metrics.podStarted(Duration.ofSeconds(3));
    metrics.podBound(Duration.ofSeconds(1));
    metrics.nodeTerminationDuration("default", Duration.ofSeconds(30));
    metrics.nodeClaimTerminationDuration("default", Duration.ofSeconds(30));
    metrics.instanceTerminationDuration("default", Duration.ofSeconds(1));
    metrics.nodeLifetime("default", Duration.ofHours(1));
    metrics.nodeDrained("default");
    metrics.podDrained("empty");
    metrics.evictionRequested(200);
    metrics.cloudProviderCall("Create", Duration.ofMillis(40), "InsufficientCapacityError");
    metrics.reconciled("provisioning", Duration.ofMillis(3), "error");
    metrics.workQueue("nodeclaim.lifecycle", () -> 0);
    metrics.allowedDisruptions(Map.of("default", Map.of("Empty", 1)));
    metrics.decisionEvaluated("empty", "empty", Duration.ofMillis(1));
    metrics.consolidationMove("rejected", "default", "Balanced");
    metrics.consolidationScore("rejected", "default", "Balanced", 0.2);
    metrics.nodesConsumingBudgets(Map.of("default", 1), List.of("Empty"));
    metrics.nodePoolCosts(Map.of("default", 1.5));
    metrics.pendingByEffectiveZone(Map.of("rack-1", 1));
    Pod undecided = pod();
    undecided.getMetadata().setName("undecided");
    Pod placed = pod();
    placed.getMetadata().setName("placed");
    metrics.podsPending(List.of(undecided, placed));
    metrics.podsDecided(List.of(placed), List.of());
    Pod pending = pod();
    pending.getMetadata().setName("pending");
    pending.getSpec().setNodeName(null);
    metrics.observeCluster(List.of(node()), List.of(pod(), pending));
    return metrics.scrape();
  }

  private static Node node() {
    return new NodeBuilder()
        .withNewMetadata()
        .withName("wm-1")
        .withCreationTimestamp("2026-12-02T12:00:00Z")
        .withLabels(Map.of("karpenter.sh/nodepool", "default"))
        .endMetadata()
        .withNewStatus()
        .withCapacity(Map.of("cpu", new Quantity("16")))
        .withAllocatable(Map.of("cpu", new Quantity("15")))
        .endStatus()
        .build();
  }

  private static Pod pod() {
    return new PodBuilder()
        .withNewMetadata()
        .withName("web")
        .withNamespace("default")
        .withCreationTimestamp("2026-12-02T12:00:00Z")
        .endMetadata()
        .withNewSpec()
        .withNodeName("wm-1")
        .addNewContainer()
        .withName("app")
        .withNewResources()
        .addToRequests("cpu", new Quantity("1"))
        .addToLimits("cpu", new Quantity("2"))
        .endResources()
        .endContainer()
        .endSpec()
        .withNewStatus()
        .withPhase("Pending")
        .endStatus()
        .build();
  }

  private static Set<String> matches(Pattern pattern, String text) {
    Set<String> found = new TreeSet<>();
    Matcher m = pattern.matcher(text);
    while (m.find()) {
      found.add(m.group(1));
    }
    return found;
  }

  @Test
  void dashboardsAndAlertsReadOnlyMetricsTheCodeExports(Vertx vertx) throws Exception {
    String api = apiMetrics(vertx);
    String controller = controllerMetrics();
    Set<String> exported = new TreeSet<>(matches(SAMPLE, api));
    exported.addAll(matches(SAMPLE, controller));
    Set<String> families = new TreeSet<>(matches(FAMILY, api));
    families.addAll(matches(FAMILY, controller));
    // The lazily registered meters are there: otherwise this test would check against too little.
    assertThat(exported)
        .contains(
            "warmmetal_machines",
            "warmmetal_pool_deficit",
            "warmmetal_claims_total",
            "warmmetal_launch_duration_seconds_bucket",
            "warmmetal_launch_stage_seconds",
            "warmmetal_launch_batch_size_count",
            "karpenter_nodeclaims_created_total",
            "karpenter_scheduler_scheduling_duration_seconds_bucket");
    assertThat(api).contains("outcome=\"InsufficientCapacity\"", "outcome=\"launched\"");

    Map<String, String> queries = new TreeMap<>();
    List<Path> dashboards;
    try (Stream<Path> files = Files.list(MONITORING)) {
      dashboards = files.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    }
    assertThat(dashboards)
        .extracting(p -> p.getFileName().toString())
        .containsExactly("warmmetal-api.json", "warmmetal-controller.json");
    Set<String> onDashboards = new TreeSet<>();
    for (Path dashboard : dashboards) {
      Map<String, String> its = dashboardQueries(dashboard);
      queries.putAll(its);
      its.values().forEach(q -> onDashboards.addAll(metricNames(q)));
    }
    Map<String, String> alerts = alertQueries(MONITORING.resolve("warmmetal-alerts.yaml"));
    assertThat(alerts).hasSizeGreaterThanOrEqualTo(8);
    queries.putAll(alerts);

    List<String> unknown = new ArrayList<>();
    queries.forEach(
        (where, query) -> {
          Set<String> names = metricNames(query);
          assertThat(names).as("%s reads no metric: %s", where, query).isNotEmpty();
          names.stream()
              .filter(n -> !exported.contains(n) && !PROMETHEUS_OWN.contains(n))
              .forEach(n -> unknown.add(where + ": " + n));
        });
    assertThat(unknown).as("metrics the code does not export").isEmpty();

    // Every family the code exports has a panel (a new metric needs one); a timer's _max gauge goes
    // with its timer.
    List<String> withoutPanel = new ArrayList<>();
    for (String family : families) {
      if (family.endsWith("_max") && families.contains(family.substring(0, family.length() - 4))) {
        continue;
      }
      if (onDashboards.stream().noneMatch(n -> n.startsWith(family))) {
        withoutPanel.add(family);
      }
    }
    assertThat(withoutPanel).as("families without a dashboard panel").isEmpty();
  }

  @Test
  void theNameExtractionFindsMetricsAndOnlyMetrics() {
    assertThat(
            metricNames(
                "histogram_quantile(0.99, sum by (le) (rate(a_b_bucket{outcome=\"x\", le=~\"1|2\"}"
                    + "[$__rate_interval]))) / ignoring(shape) group_left c:d offset 5m > bool 1"))
        .containsExactly("a_b_bucket", "c:d");
    assertThat(metricNames("absent(up{job=~\".*warmmetal-api\"})")).containsExactly("up");
    assertThat(metricNames("sum without (x) (renamed_metric)")).containsExactly("renamed_metric");
  }
}
