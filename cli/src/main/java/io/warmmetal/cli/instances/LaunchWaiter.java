package io.warmmetal.cli.instances;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.warmmetal.cli.events.EventFeed;
import io.warmmetal.cli.http.ApiClient;
import io.warmmetal.cli.output.Cells;
import io.warmmetal.cli.session.ExitCode;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code --wait}: polls each instance until it runs, fails or the time is up, and shows progress on
 * stderr — every state change, and the instance's events (its machine's join, a power-on) as they
 * are recorded.
 */
final class LaunchWaiter {
  /**
   * Beyond this many instances, following each one's events costs more requests than the progress
   * is worth.
   */
  private static final int MAX_FOLLOWED = 8;

  private static final Set<String> FAILED = Set.of("failed", "terminated", "shutting-down");

  record Outcome(int exitCode, ArrayNode instances) {}

  private final ApiClient api;
  private final PrintWriter err;
  private final Clock clock;
  private final Duration interval;

  LaunchWaiter(ApiClient api, PrintWriter err, Clock clock, Duration interval) {
    this.api = api;
    this.err = err;
    this.clock = clock;
    this.interval = interval;
  }

  Outcome await(List<String> ids, Duration timeout) {
    Instant start = clock.instant();
    Map<String, String> states = new LinkedHashMap<>();
    Map<String, JsonNode> latest = new LinkedHashMap<>();
    Map<String, EventFeed> feeds = new LinkedHashMap<>();
    if (ids.size() <= MAX_FOLLOWED) {
      ids.forEach(id -> feeds.put(id, new EventFeed(api, null, id, null)));
    }
    progress(
        start,
        "waiting for " + ids.size() + " instance(s) to run (timeout " + Cells.age(timeout) + ")");
    while (true) {
      feeds.values().forEach(f -> f.next().forEach(e -> progress(start, "  " + event(e))));
      for (String id : ids) {
        JsonNode instance = api.get("/v1/instances/" + id);
        latest.put(id, instance);
        String state = instance.path("state").asText();
        if (!state.equals(states.put(id, state))) {
          String reason =
              instance.hasNonNull("stateReason")
                  ? " (" + instance.get("stateReason").asText() + ")"
                  : "";
          progress(start, id + " " + state + " on " + instance.path("machineId").asText() + reason);
        }
      }
      ArrayNode all = JsonNodeFactory.instance.arrayNode();
      latest.values().forEach(all::add);
      if (states.values().stream().anyMatch(FAILED::contains)) {
        progress(
            start, "Error: an instance did not come up: `warmmetal events --instance ID` says why");
        return new Outcome(ExitCode.WAIT_FAILED, all);
      }
      if (states.values().stream().allMatch("running"::equals)) {
        progress(start, "all " + ids.size() + " running");
        return new Outcome(ExitCode.OK, all);
      }
      if (Duration.between(start, clock.instant()).compareTo(timeout) >= 0) {
        progress(
            start,
            "Error: timed out after "
                + Cells.age(timeout)
                + "; the instances keep going: `warmmetal instances get ID`");
        return new Outcome(ExitCode.WAIT_FAILED, all);
      }
      if (!EventFeed.pause(interval)) {
        progress(start, "interrupted");
        return new Outcome(ExitCode.WAIT_FAILED, all);
      }
    }
  }

  private static String event(JsonNode e) {
    StringBuilder b =
        new StringBuilder(e.path("type").asText()).append(' ').append(e.path("subject").asText());
    if (e.hasNonNull("from") || e.hasNonNull("to")) {
      b.append(' ')
          .append(Cells.text(e.get("from")))
          .append(" -> ")
          .append(Cells.text(e.get("to")));
    }
    if (e.hasNonNull("reason")) {
      b.append(": ").append(e.get("reason").asText());
    }
    return b.toString();
  }

  private void progress(Instant start, String line) {
    err.println("[" + Cells.age(Duration.between(start, clock.instant())) + "] " + line);
    err.flush();
  }
}
