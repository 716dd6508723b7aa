package io.warmmetal.api.ec2;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.RequiredTool;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;

/**
 * The AWS CLI as a user types it ({@code aws ec2 … --endpoint-url http://…}), against the running
 * API: launch with a client token and tags, filter, tag, retry, describe types and zones,
 * terminate; an action not answered is EC2's InvalidAction. The CLI reads only the environment this
 * test gives it (no config files, no instance metadata lookups).
 */
@Tag("processes")
@ExtendWith(VertxExtension.class)
class AwsCliTest {
  private static ApiFixture fx;
  private static Path home;
  private static AwsBasicCredentials key;

  /** What one {@code aws} run printed and how it ended. */
  record Run(int exit, String out, String err) {
    JsonObject json() {
      assertThat(exit).as(err).isZero();
      return new JsonObject(out);
    }
  }

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
    home = Files.createTempDirectory("aws-cli-home");
    key = Ec2TestClients.accessKey(fx, "client", "default");
    fx.registerMachines(
        3,
        ApiFixture.facts(16, 64),
        true,
        new JsonObject().put("topology.kubernetes.io/zone", "rack-1"));
  }

  @AfterAll
  static void stop() throws IOException {
    fx.close();
    try (var files = Files.walk(home)) {
      files.sorted((a, b) -> b.compareTo(a)).forEach(p -> p.toFile().delete());
    }
  }

  static Run aws(String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(RequiredTool.onPath("aws", "awscli").toString());
    command.addAll(List.of(args));
    command.addAll(
        List.of("--endpoint-url", "http://127.0.0.1:" + fx.api.port(), "--output", "json"));
    ProcessBuilder pb = new ProcessBuilder(command);
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.startsWith("AWS_"));
    env.put("HOME", home.toString());
    env.put("AWS_ACCESS_KEY_ID", key.accessKeyId());
    env.put("AWS_SECRET_ACCESS_KEY", key.secretAccessKey());
    env.put("AWS_DEFAULT_REGION", "rack-region");
    env.put("AWS_CONFIG_FILE", home.resolve("config").toString());
    env.put("AWS_SHARED_CREDENTIALS_FILE", home.resolve("credentials").toString());
    env.put("AWS_EC2_METADATA_DISABLED", "true"); // never ask 169.254.169.254
    env.put("AWS_PAGER", "");
    env.put("AWS_MAX_ATTEMPTS", "2");
    Path out = home.resolve("out");
    Path err = home.resolve("err");
    Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("aws " + String.join(" ", args) + " did not end in 120 s");
    }
    return new Run(
        p.exitValue(),
        Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  @Test
  void theCliLaunchesFiltersTagsRetriesAndTerminates() throws Exception {
    String[] launch = {
      "ec2",
      "run-instances",
      "--instance-type",
      "x86-16c-64g",
      "--count",
      "2",
      "--client-token",
      "cli-1",
      "--placement",
      "AvailabilityZone=rack-1",
      "--tag-specifications",
      "ResourceType=instance,Tags=[{Key=team,Value=a}]"
    };
    JsonObject run = aws(launch).json();
    JsonArray instances = run.getJsonArray("Instances");
    assertThat(instances).hasSize(2);
    List<String> ids = new ArrayList<>();
    instances.forEach(i -> ids.add(((JsonObject) i).getString("InstanceId")));
    assertThat(instances.getJsonObject(0).getJsonObject("State").getString("Name"))
        .isEqualTo("pending");

    // The same command again (a retry): the same reservation, nothing more launched.
    JsonObject again = aws(launch).json();
    assertThat(again.getString("ReservationId")).isEqualTo(run.getString("ReservationId"));
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(2);

    JsonObject found =
        aws(
                "ec2",
                "describe-instances",
                "--filters",
                "Name=tag:team,Values=a",
                "Name=instance-state-name,Values=pending")
            .json();
    assertThat(found.getJsonArray("Reservations").getJsonObject(0).getJsonArray("Instances"))
        .hasSize(2);

    assertThat(
            aws("ec2", "create-tags", "--resources", ids.get(0), "--tags", "Key=owner,Value=bob")
                .exit())
        .isZero();
    JsonObject tags = aws("ec2", "describe-tags", "--filters", "Name=key,Values=owner").json();
    assertThat(tags.getJsonArray("Tags").getJsonObject(0).getString("ResourceId"))
        .isEqualTo(ids.get(0));

    JsonObject types =
        aws("ec2", "describe-instance-types", "--instance-types", "x86-16c-64g").json();
    assertThat(
            types
                .getJsonArray("InstanceTypes")
                .getJsonObject(0)
                .getJsonObject("VCpuInfo")
                .getInteger("DefaultVCpus"))
        .isEqualTo(16);
    assertThat(
            aws("ec2", "describe-availability-zones")
                .json()
                .getJsonArray("AvailabilityZones")
                .getJsonObject(0)
                .getString("ZoneName"))
        .isEqualTo("rack-1");

    List<String> terminate =
        new ArrayList<>(List.of("ec2", "terminate-instances", "--instance-ids"));
    terminate.addAll(ids);
    JsonArray changes =
        aws(terminate.toArray(String[]::new)).json().getJsonArray("TerminatingInstances");
    assertThat(changes).hasSize(2);
    assertThat(changes.getJsonObject(0).getJsonObject("PreviousState").getInteger("Code")).isZero();
  }

  @Test
  void anActionNotAnsweredIsEc2sInvalidAction() throws Exception {
    Run r = aws("ec2", "create-vpc", "--cidr-block", "10.0.0.0/16");
    assertThat(r.exit()).isNotZero();
    assertThat(r.err()).contains("InvalidAction").contains("CreateVpc");
  }
}
