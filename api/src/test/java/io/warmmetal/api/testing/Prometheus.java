package io.warmmetal.api.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Debian's {@code prometheus} as a process on loopback: scrapes the given jobs (and itself) every
 * second, evaluates the given rule files every second and sends alerts to an Alertmanager, if one
 * is given. Its HTTP API answers the test's queries.
 */
public final class Prometheus implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpProcess process;

  private Prometheus(HttpProcess process) {
    this.process = process;
  }

  /**
   * Starts Prometheus in {@code dir} (its configuration, data and log), scraping each job's
   * loopback target ({@code job → host:port}), reading {@code ruleFiles}, alerting {@code
   * alertmanager} ({@code host:port}, or null for none).
   */
  public static Prometheus start(
      Path dir, Map<String, String> jobs, List<Path> ruleFiles, String alertmanager)
      throws IOException, InterruptedException {
    Path binary = RequiredTool.onPath("prometheus", "prometheus");
    int port = ApiProcess.freePort();
    StringBuilder config =
        new StringBuilder("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n");
    if (!ruleFiles.isEmpty()) {
      config.append("rule_files:\n");
      ruleFiles.forEach(f -> config.append("  - ").append(f.toAbsolutePath()).append('\n'));
    }
    if (alertmanager != null) {
      config
          .append("alerting:\n  alertmanagers:\n    - static_configs:\n")
          .append("        - targets: ['")
          .append(alertmanager)
          .append("']\n");
    }
    config.append("scrape_configs:\n");
    Map<String, String> scraped = new TreeMap<>(jobs);
    scraped.put("prometheus", "127.0.0.1:" + port);
    scraped.forEach(
        (job, target) ->
            config
                .append("  - job_name: ")
                .append(job)
                .append("\n    static_configs:\n      - targets: ['")
                .append(target)
                .append("']\n"));
    Path file = dir.resolve("prometheus.yml");
    Files.writeString(file, config);
    return new Prometheus(
        HttpProcess.start(
            List.of(
                binary.toString(),
                "--config.file=" + file,
                "--storage.tsdb.path=" + dir.resolve("prometheus-data"),
                "--web.listen-address=127.0.0.1:" + port,
                "--log.level=warn"),
            dir.resolve("prometheus.log"),
            port,
            "/-/ready"));
  }

  /**
   * An instant query's result (a vector's samples): fails on a query Prometheus refuses, so a bad
   * expression is an error, not an empty answer.
   */
  public JsonNode query(String promql) throws IOException, InterruptedException {
    HttpResponse<String> answer =
        process.get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
    JsonNode body = JSON.readTree(answer.body());
    if (answer.statusCode() != 200 || !"success".equals(body.path("status").asText())) {
      throw new AssertionError("Prometheus refused " + promql + ": " + answer.body());
    }
    return body.path("data").path("result");
  }

  /** A query's single value, or -1 if it has none. */
  public double value(String promql) throws IOException, InterruptedException {
    JsonNode result = query(promql);
    return result.isEmpty() ? -1 : result.get(0).path("value").get(1).asDouble();
  }

  /**
   * How many times the rule group evaluated least has been evaluated, as Prometheus counts it (it
   * scrapes itself): for waiting on a number of evaluations, not on time.
   */
  public long ruleEvaluations() throws IOException, InterruptedException {
    return (long) value("min(prometheus_rule_group_iterations_total)");
  }

  /** {@code /api/v1/<path>}'s data: targets, rules, alerts. */
  public JsonNode api(String path) throws IOException, InterruptedException {
    return JSON.readTree(process.get("/api/v1/" + path).body()).path("data");
  }

  public String logTail() {
    return process.logTail();
  }

  @Override
  public void close() throws InterruptedException {
    process.close();
  }
}
