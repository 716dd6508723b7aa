package io.warmmetal.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.cli.session.ExitCode;
import io.warmmetal.cli.testing.CliFixture;
import io.warmmetal.protocol.testing.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code instances launch}, with and without --wait, against the real API; the test plays the
 * agent.
 */
class LaunchTest {
  /** One API per test: launches leave instances and claimed machines behind. */
  @RegisterExtension final CliFixture fx = new CliFixture();

  @TempDir Path dir;

  /** Waits until the machine's join is queued, then reports it as its agent would. */
  private void reportJoin(String machine, boolean ok) throws InterruptedException {
    Await.until("a join for " + machine, () -> !fx.api.openCommands(machine, "join").isEmpty());
    fx.api.report(fx.api.openCommands(machine, "join").get(0), ok);
  }

  @Test
  void waitShowsProgressUntilTheInstanceRuns() throws InterruptedException {
    String machine = fx.api.registerMachines(1, ApiFixture.facts(8, 32), true).get(0);
    var run =
        fx.background(
            "instances",
            "launch",
            "--shape",
            "x86-8c-32g",
            "--label",
            "team=ml",
            "--wait",
            "--poll-interval",
            "100ms");
    Await.until("the pending instance shown", () -> run.err().contains("pending on " + machine));
    reportJoin(machine, true);

    assertThat(run.code()).as(run.toString()).isEqualTo(ExitCode.OK);
    assertThat(run.err())
        .contains("client token: cli-", "InstanceState", "running on " + machine, "all 1 running");
    assertThat(run.out())
        .startsWith("ID")
        .containsPattern("i-[0-9a-f]{17}\\s+running\\s+x86-8c-32g\\s+" + machine);
  }

  @Test
  void aFailedJoinExitsFour() throws InterruptedException {
    String machine = fx.api.registerMachines(1, ApiFixture.facts(8, 32), true).get(0);
    var run =
        fx.background(
            "instances", "launch", "--shape", "x86-8c-32g", "--wait", "--poll-interval", "100ms");
    reportJoin(machine, false);

    assertThat(run.code()).as(run.toString()).isEqualTo(ExitCode.WAIT_FAILED);
    assertThat(run.err()).contains("failed", "did not come up");
  }

  @Test
  void aWaitThatTimesOutExitsFourAndTheInstanceKeepsGoing() throws InterruptedException {
    fx.api.registerMachines(1, ApiFixture.facts(8, 32), true);
    var run =
        fx.run(
            "instances",
            "launch",
            "--shape",
            "x86-8c-32g",
            "--wait",
            "--timeout",
            "1s",
            "--poll-interval",
            "200ms");
    assertThat(run.code()).as(run.toString()).isEqualTo(ExitCode.WAIT_FAILED);
    assertThat(run.err()).contains("timed out after 1s");
    assertThat(fx.run("instances", "ls", "--state", "pending").out().split("\n")).hasSize(2);
  }

  @Test
  void theClientTokenIsPrintedAndARetryWithItGetsTheSameLaunch() throws Exception {
    fx.api.registerMachines(2, ApiFixture.facts(8, 32), true);
    var first = fx.run("instances", "launch", "--shape", "x86-8c-32g", "-o", "json");
    assertThat(first.code()).as(first.toString()).isZero();
    String token = first.err().replaceAll("(?s).*client token: (\\S+).*", "$1");
    JsonNode launch = new ObjectMapper().readTree(first.out());
    assertThat(launch.path("clientToken").asText()).isEqualTo(token);

    var retry =
        fx.run(
            "instances", "launch", "--shape", "x86-8c-32g", "--client-token", token, "-o", "json");
    JsonNode again = new ObjectMapper().readTree(retry.out());
    assertThat(again.path("launchId").asText()).isEqualTo(launch.path("launchId").asText());
    assertThat(fx.api.count("SELECT count(*) FROM instances")).isEqualTo(1);

    var mismatch =
        fx.run(
            "instances",
            "launch",
            "--shape",
            "x86-8c-32g",
            "--count",
            "2",
            "--client-token",
            token);
    assertThat(mismatch.code()).isEqualTo(ExitCode.API_ERROR);
    assertThat(mismatch.err())
        .contains("Error: IdempotentParameterMismatch", "give a new --client-token");
  }

  @Test
  void terminateAndGet() throws InterruptedException {
    fx.api.registerMachines(1, ApiFixture.facts(8, 32), true);
    var launch = fx.run("instances", "launch", "--shape", "x86-8c-32g");
    String id = launch.out().split("\n")[1].split("\\s+")[0];
    var terminated = fx.run("instances", "terminate", id);
    assertThat(terminated.code()).as(terminated.toString()).isZero();
    assertThat(fx.run("instances", "get", id).out())
        .containsPattern(id + "\\s+(shutting-down|terminated)");
    assertThat(List.of(fx.run("instances", "ls", "-o", "wide").out().split("\n")[0].split("\\s+")))
        .contains("PROJECT", "LABELS", "REASON");
  }

  @Test
  void aStandbyLaunchPreJoinsItsMachineAndALaunchAllowingPreJoinedTakesIt() throws Exception {
    String machine = fx.api.registerMachines(1, ApiFixture.facts(8, 32), true).get(0);
    Path join = dir.resolve("join.yaml");
    Files.writeString(
        join,
        """
        apiServer: 10.0.0.1:6443
        caCertHash: sha256:0000000000000000000000000000000000000000000000000000000000000000
        bootstrapToken: abcdef.0123456789abcdef
        """);

    var standby =
        fx.run(
            "instances",
            "launch",
            "--shape",
            "x86-8c-32g",
            "--standby",
            "--join-file",
            join.toString(),
            "-o",
            "json");
    assertThat(standby.code()).as(standby.toString()).isZero();
    JsonNode standbyInstance = new ObjectMapper().readTree(standby.out()).path("instances").get(0);
    assertThat(standbyInstance.path("standby").asBoolean()).isTrue();
    reportJoin(machine, true);
    assertThat(fx.run("machines", "ls", "--state", "pre-joined").out()).contains(machine);
    assertThat(fx.run("instances", "ls", "--standby").out())
        .contains(standbyInstance.path("id").asText());

    var taken =
        fx.run(
            "instances",
            "launch",
            "--shape",
            "x86-8c-32g",
            "--allow-pre-joined",
            "--join-file",
            join.toString(),
            "-o",
            "json");
    assertThat(taken.code()).as(taken.toString()).isZero();
    JsonNode instance = new ObjectMapper().readTree(taken.out()).path("instances").get(0);
    assertThat(instance.path("preJoined").asBoolean()).isTrue();
    assertThat(instance.path("state").asText()).isEqualTo("running");
    assertThat(instance.path("machineId").asText()).isEqualTo(machine);
    assertThat(fx.run("instances", "ls", "--standby", "--state", "running").out().split("\n"))
        .hasSize(1); // the header: the standby instance ended
  }
}
