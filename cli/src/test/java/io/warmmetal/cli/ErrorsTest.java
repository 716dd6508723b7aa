package io.warmmetal.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.cli.session.ExitCode;
import io.warmmetal.cli.testing.CliFixture;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Errors as scripts see them: one {@code Error:} line, a hint, and the exit code. */
class ErrorsTest {
  @RegisterExtension static final CliFixture fx = new CliFixture();

  @Test
  void aBadTokenIsAnApiErrorWithTheHintAndTheTokenIsNotPrinted() {
    Map<String, String> env = fx.env();
    env.put("WARMMETAL_TOKEN", "not-a-real-token-4f1d");
    var run = CliFixture.run(env, "shapes", "ls");
    assertThat(run.code()).isEqualTo(ExitCode.API_ERROR);
    assertThat(run.err())
        .startsWith("Error: Unauthorized: ")
        .contains("check WARMMETAL_TOKEN or `warmmetal config set token`")
        .doesNotContain("4f1d");
    assertThat(run.out()).isEmpty();
  }

  @Test
  void anUnreachableApiExitsThree() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    var run =
        CliFixture.run(
            Map.of(
                "WARMMETAL_API",
                "http://127.0.0.1:" + port,
                "WARMMETAL_TOKEN",
                "x",
                "WARMMETAL_CONFIG",
                fx.home.resolve("none.yaml").toString()),
            "machines",
            "ls");
    assertThat(run.code()).isEqualTo(ExitCode.UNREACHABLE);
    assertThat(run.err()).startsWith("Error: cannot reach the API at http://127.0.0.1:" + port);
  }

  @Test
  void usageErrorsExitTwo() {
    assertThat(fx.run("pools", "set", "x86-8c-32g", "--min-warm", "1").code())
        .isEqualTo(ExitCode.USAGE);
    assertThat(fx.run("nonsense").code()).isEqualTo(ExitCode.USAGE);
    assertThat(fx.run("machines").code()).isEqualTo(ExitCode.USAGE);
    var badFormat = fx.run("shapes", "ls", "-o", "xml");
    assertThat(badFormat.code()).isEqualTo(ExitCode.USAGE);
    assertThat(badFormat.err()).contains("'xml' is not json, yaml, wide or table");
    var noApi =
        CliFixture.run(
            Map.of("WARMMETAL_CONFIG", fx.home.resolve("none.yaml").toString()), "shapes", "ls");
    assertThat(noApi.code()).isEqualTo(ExitCode.USAGE);
    assertThat(noApi.err()).contains("no API URL");
  }

  @Test
  void notFoundNamesTheResource() {
    var run = fx.run("instances", "get", "i-0123456789abcdef0");
    assertThat(run.code()).isEqualTo(ExitCode.API_ERROR);
    assertThat(run.err())
        .startsWith("Error: NotFound: ")
        .contains("hint: no instance i-0123456789abcdef0");
  }

  @Test
  void aHintNamesTheCommandThatHelps() {
    fx.api.registerMachines(1, ApiFixture.facts(2, 8), true);
    var noPool = fx.run("pools", "get", "x86-2c-8g");
    assertThat(noPool.code()).isEqualTo(ExitCode.API_ERROR);
    assertThat(noPool.err())
        .contains(
            "hint: shape x86-2c-8g has no warm-pool target yet: `warmmetal pools set "
                + "x86-2c-8g --min-warm N --max-warm M`");
    var noShape = fx.run("pools", "set", "x86-99c-1g", "--min-warm", "1", "--max-warm", "1");
    assertThat(noShape.err())
        .contains("hint: no shape x86-99c-1g: `warmmetal shapes ls` lists the shapes");
    var launch = fx.run("instances", "launch", "--shape", "nonsense");
    assertThat(launch.err())
        .contains("Error: ValidationError: ", "hint: `warmmetal shapes ls` lists the shapes");
    assertThat(fx.run("machines", "get", "m-0123456789abcdef").err())
        .contains("hint: no machine m-0123456789abcdef: `warmmetal machines ls` lists them");
  }

  @Test
  void aProjectThatDoesNotExistIsSaidToAndHowToCreateIt() {
    var token = fx.run("--project", "team-x", "tokens", "create", "ci", "--role", "client");
    assertThat(token.code()).isEqualTo(ExitCode.API_ERROR);
    assertThat(token.err())
        .startsWith("Error: NotFound: project team-x does not exist")
        .contains(
            "hint: project team-x does not exist: create it with `warmmetal projects set team-x`",
            "or name another with --project or WARMMETAL_PROJECT");
    assertThat(fx.run("projects", "get", "team-x").err())
        .contains(
            "hint: project team-x does not exist: create it with `warmmetal projects set team-x`");
    // What the hint says works.
    assertThat(fx.run("projects", "set", "team-x").code()).isZero();
    assertThat(fx.run("--project", "team-x", "tokens", "create", "ci", "--role", "client").code())
        .isZero();
  }

  @Test
  void aMachineWhoseResetIsUnreportedSaysWhatItWaitsForAndTheWaysOn() {
    String machine = fx.api.registerMachines(1, ApiFixture.facts(16, 64), true).get(0);
    var launched = fx.run("instances", "launch", "--shape", "x86-16c-64g", "-o", "json");
    assertThat(launched.code()).as(launched.toString()).isZero();
    String instance =
        fx.api
            .client
            .get("/v1/machines/" + machine, ApiFixture.ADMIN)
            .body()
            .getString("instanceId");
    assertThat(fx.run("instances", "terminate", instance).code()).isZero();

    // Retiring (or rebooting) it: not "terminate the instance" (it is), but what the machine waits
    // for.
    var retire = fx.run("machines", "retire", machine);
    assertThat(retire.code()).isEqualTo(ExitCode.API_ERROR);
    assertThat(retire.err())
        .contains(
            "is resetting: instance " + instance + " was terminated",
            "waits for the agent's report",
            "instance " + instance + " is terminated already",
            "`warmmetal events --machine " + machine + " --follow`",
            "`warmmetal machines recover " + machine + "`",
            "`warmmetal machines report " + machine + " --status succeeded`")
        .doesNotContain("terminate its instance");
    assertThat(fx.run("machines", "reboot", machine).err())
        .contains("rebooted once the reset is reported", "`warmmetal machines report " + machine);
    // Recovering its agent is allowed now, but this machine has no SSH access: the hint leaves that
    // way out.
    var recover = fx.run("machines", "recover", machine);
    assertThat(recover.err())
        .contains("no SSH access", "`warmmetal machines report " + machine)
        .doesNotContain("`warmmetal machines recover");

    // The way on for an agent that is gone: its open reset, reported failed; then it retires.
    assertThat(fx.run("machines", "commands", machine).out())
        .containsPattern("reset\s+queued\s+" + instance);
    var report =
        fx.run("machines", "report", machine, "--status", "failed", "--message", "host gone");
    assertThat(report.code()).as(report.toString()).isZero();
    assertThat(report.out()).containsPattern("reset\s+failed\s+" + instance + ".*host gone");
    assertThat(fx.run("machines", "retire", machine).out()).contains("retired");
    assertThat(fx.run("instances", "get", instance).out()).contains("terminated");
    var again = fx.run("machines", "report", machine, "--status", "failed");
    assertThat(again.code()).isEqualTo(ExitCode.USAGE);
    assertThat(again.err())
        .contains("has no open command", "`warmmetal machines commands " + machine + "`");
  }

  @Test
  void insufficientCapacitySaysWhenToRetry() {
    fx.api.registerMachines(1, ApiFixture.facts(8, 32), true);
    var run = fx.run("instances", "launch", "--shape", "x86-8c-32g", "--count", "2");
    assertThat(run.code()).isEqualTo(ExitCode.API_ERROR);
    assertThat(run.err())
        .contains("Error: InsufficientCapacity: ")
        .containsPattern("retry after \\d+ seconds");
  }
}
