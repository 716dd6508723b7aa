package io.warmmetal.api.monitoring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.protocol.testing.Await;
import java.nio.file.Files;
import java.nio.file.Path;
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
    try (ApiFixture fx = MonitoredFleet.start(vertx, 2)) {
      MonitoredFleet.pool(fx, 3); // two machines for a pool of three: a deficit
      // Two warm machines, three launches: one InsufficientCapacity.
      MonitoredFleet.launch(fx, 201);
      MonitoredFleet.launch(fx, 201);
      MonitoredFleet.launch(fx, 503);
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
    String controller = MonitoredFleet.controllerMetrics().scrape();
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
