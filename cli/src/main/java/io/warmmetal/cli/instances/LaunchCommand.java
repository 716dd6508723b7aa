package io.warmmetal.cli.instances;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.warmmetal.cli.output.OutputFormat;
import io.warmmetal.cli.session.SessionCommand;
import io.warmmetal.cli.session.UsageProblem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code warmmetal instances launch}: {@code POST /v1/instances}, optionally waiting until they
 * run.
 */
@Command(name = "launch", description = "Launch instances on warm machines.")
final class LaunchCommand extends SessionCommand {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  @Option(
      names = "--shape",
      required = true,
      paramLabel = "SHAPE",
      description = "shape name or alias; repeat for fallbacks in order of preference")
  List<String> shapes;

  @Option(names = "--count", paramLabel = "N", description = "exactly N instances (min and max)")
  Integer count;

  @Option(names = "--min", paramLabel = "N", description = "at least N, or nothing (default 1)")
  Integer min;

  @Option(names = "--max", paramLabel = "N", description = "at most N (default: --min)")
  Integer max;

  @Option(
      names = "--label",
      paramLabel = "KEY=VALUE",
      description = "a label for the instances (repeatable)")
  Map<String, String> labels;

  @Option(
      names = "--machine-label",
      paramLabel = "KEY=VALUE",
      description = "take only machines carrying this label (repeatable)")
  Map<String, String> machineLabels;

  @Option(
      names = "--client-token",
      paramLabel = "TOKEN",
      description = "idempotency token; default a random one, printed so a retry can reuse it")
  String clientToken;

  @Option(names = "--allow-preparing", description = "also take machines still being prepared")
  boolean allowPreparing;

  @Option(
      names = "--allow-standby",
      description = "also take standby machines (switched on and prepared first)")
  boolean allowStandby;

  @Option(
      names = "--standby",
      description =
          "pre-joined standby: join the machines now; they wait pre-joined for --allow-pre-joined"
              + " (needs --join-file)")
  boolean standby;

  @Option(
      names = "--allow-pre-joined",
      description =
          "first take machines a standby launch pre-joined to the same cluster, without a join"
              + " (needs --join-file)")
  boolean allowPreJoined;

  @Option(
      names = "--join-file",
      paramLabel = "FILE",
      description =
          "the kubernetes join block (apiServer, caCertHash, bootstrapToken, ...) as YAML or JSON")
  Path joinFile;

  @Option(
      names = "--user-data-file",
      paramLabel = "FILE",
      description = "a script the agent runs instead of a join")
  Path userDataFile;

  @Option(
      names = "--wait",
      description = "wait until the instances run (progress on stderr); exit 4 on failure")
  boolean await;

  @Option(
      names = "--timeout",
      defaultValue = "10m",
      paramLabel = "DURATION",
      converter = Durations.class,
      description = "how long --wait waits: 90s, 10m, 1h (default 10m)")
  Duration timeout;

  @Option(
      names = "--poll-interval",
      defaultValue = "1s",
      paramLabel = "DURATION",
      converter = Durations.class,
      hidden = true)
  Duration interval;

  @Override
  public Integer call() throws IOException {
    ObjectNode body = request();
    // Printed before the request: if the answer is lost, the same token retried cannot launch
    // twice.
    session()
        .err()
        .println(
            "client token: "
                + body.get("clientToken").asText()
                + " (retry with --client-token to get the same launch)");
    session().err().flush();
    JsonNode launch = api().post("/v1/instances", body);
    JsonNode instances = launch.path("instances");
    var printer = session().printer();
    boolean raw =
        session().output() == OutputFormat.JSON || session().output() == OutputFormat.YAML;
    if (!await) {
      printer.print(
          raw ? launch : instances, InstancesCommand.columns(session().clock().instant()));
      return 0;
    }
    List<String> ids = new ArrayList<>();
    instances.forEach(i -> ids.add(i.path("id").asText()));
    LaunchWaiter waiter = new LaunchWaiter(api(), session().err(), session().clock(), interval);
    LaunchWaiter.Outcome outcome = waiter.await(ids, timeout);
    printer.print(outcome.instances(), InstancesCommand.columns(session().clock().instant()));
    return outcome.exitCode();
  }

  private ObjectNode request() throws IOException {
    ObjectNode body = YAML.createObjectNode();
    if (shapes.size() == 1) {
      body.put("shape", shapes.get(0));
    } else {
      shapes.forEach(body.putArray("shapes")::add);
    }
    if (count != null && (min != null || max != null)) {
      throw new UsageProblem("give --count, or --min/--max, not both");
    }
    Integer lo = count != null ? count : min;
    Integer hi = count != null ? count : max;
    if (lo != null) {
      body.put("minCount", lo);
    }
    if (hi != null) {
      body.put("maxCount", hi);
    }
    body.put("clientToken", clientToken != null ? clientToken : "cli-" + UUID.randomUUID());
    if (labels != null) {
      labels.forEach(body.putObject("labels")::put);
    }
    if (machineLabels != null) {
      machineLabels.forEach(body.putObject("machineLabels")::put);
    }
    if (allowPreparing) {
      body.put("allowPreparing", true);
    }
    if (allowStandby) {
      body.put("allowStandby", true);
    }
    if (standby) {
      body.put("standby", true);
    }
    if (allowPreJoined) {
      body.put("allowPreJoined", true);
    }
    if (joinFile != null) {
      body.set("kubernetes", YAML.readTree(joinFile.toFile()));
    }
    if (userDataFile != null) {
      body.put("userData", Base64.getEncoder().encodeToString(Files.readAllBytes(userDataFile)));
    }
    return body;
  }
}
