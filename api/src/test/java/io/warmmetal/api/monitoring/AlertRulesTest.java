package io.warmmetal.api.monitoring;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.api.testing.RequiredTool;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The shipped alert rules as Prometheus reads them: {@code promtool check rules} accepts them, and
 * their unit tests ({@code deploy/monitoring/warmmetal-alerts.test.yaml}, run by {@code promtool
 * test rules}) pass and cover every alert both ways — a case where it fires, with its labels and
 * rendered annotations, and one where it stays quiet.
 */
@Tag("processes")
class AlertRulesTest {
  static final Path MONITORING = Path.of("..", "deploy", "monitoring");
  static final Path RULES = MONITORING.resolve("warmmetal-alerts.yaml");
  private static final Path UNIT_TESTS = MONITORING.resolve("warmmetal-alerts.test.yaml");

  @Test
  void promtoolAcceptsTheRules() throws Exception {
    assertThat(promtool("check", "rules", RULES.getFileName().toString()))
        .contains("SUCCESS: " + alerts().size() + " rules found");
  }

  @Test
  void theRulesUnitTestsPass() throws Exception {
    assertThat(promtool("test", "rules", UNIT_TESTS.getFileName().toString())).contains("SUCCESS");
  }

  @Test
  @SuppressWarnings("unchecked")
  void everyAlertHasACaseWhereItFiresAndOneWhereItStaysQuiet() throws Exception {
    Set<String> fires = new TreeSet<>();
    Set<String> quiet = new TreeSet<>();
    Map<String, Object> unitTests = new Yaml().load(Files.readString(UNIT_TESTS));
    for (Map<String, Object> test : (List<Map<String, Object>>) unitTests.get("tests")) {
      for (Map<String, Object> check :
          (List<Map<String, Object>>) test.getOrDefault("alert_rule_test", List.of())) {
        List<?> expected = (List<?>) check.get("exp_alerts");
        (expected == null || expected.isEmpty() ? quiet : fires)
            .add(String.valueOf(check.get("alertname")));
      }
    }
    assertThat(fires).as("alerts with a case where they fire").isEqualTo(alerts());
    assertThat(quiet).as("alerts with a case where they stay quiet").isEqualTo(alerts());
  }

  @SuppressWarnings("unchecked")
  static Set<String> alerts() throws IOException {
    Map<String, Object> rules = new Yaml().load(Files.readString(RULES));
    Set<String> names = new TreeSet<>();
    for (Map<String, Object> group : (List<Map<String, Object>>) rules.get("groups")) {
      for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
        names.add(String.valueOf(rule.get("alert")));
      }
    }
    return names;
  }

  /** Runs promtool in deploy/monitoring; its output, or a failure with it. */
  private static String promtool(String... args) throws Exception {
    Path promtool = RequiredTool.onPath("promtool", "prometheus");
    List<String> command = new ArrayList<>(List.of(promtool.toString()));
    command.addAll(List.of(args));
    Process process =
        new ProcessBuilder(command)
            .directory(MONITORING.toFile())
            .redirectErrorStream(true)
            .start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor()).as("promtool %s:\n%s", String.join(" ", args), output).isZero();
    return output;
  }
}
