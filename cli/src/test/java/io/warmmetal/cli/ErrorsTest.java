package io.warmmetal.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.cli.session.ExitCode;
import io.warmmetal.cli.testing.CliFixture;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Errors as scripts see them: one {@code Error:} line, a hint, and the exit code. */
class ErrorsTest {
  @RegisterExtension
  static final CliFixture fx = new CliFixture();

  @Test
  void aBadTokenIsAnApiErrorWithTheHintAndTheTokenIsNotPrinted() {
    Map<String, String> env = fx.env();
    env.put("WARMMETAL_TOKEN", "not-a-real-token-4f1d");
    var run = CliFixture.run(env, "shapes", "ls");
    assertThat(run.code()).isEqualTo(ExitCode.API_ERROR);
    assertThat(run.err()).startsWith("Error: Unauthorized: ")
        .contains("check WARMMETAL_TOKEN or `warmmetal config set token`").doesNotContain("4f1d");
    assertThat(run.out()).isEmpty();
  }

  @Test
  void anUnreachableApiExitsThree() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    var run = CliFixture.run(Map.of("WARMMETAL_API", "http://127.0.0.1:" + port, "WARMMETAL_TOKEN", "x",
        "WARMMETAL_CONFIG", fx.home.resolve("none.yaml").toString()), "machines", "ls");
    assertThat(run.code()).isEqualTo(ExitCode.UNREACHABLE);
    assertThat(run.err()).startsWith("Error: cannot reach the API at http://127.0.0.1:" + port);
  }

  @Test
  void usageErrorsExitTwo() {
    assertThat(fx.run("pools", "set", "x86-8c-32g", "--min-warm", "1").code()).isEqualTo(ExitCode.USAGE);
    assertThat(fx.run("nonsense").code()).isEqualTo(ExitCode.USAGE);
    assertThat(fx.run("machines").code()).isEqualTo(ExitCode.USAGE);
    var badFormat = fx.run("shapes", "ls", "-o", "xml");
    assertThat(badFormat.code()).isEqualTo(ExitCode.USAGE);
    assertThat(badFormat.err()).contains("'xml' is not json, yaml, wide or table");
    var noApi = CliFixture.run(Map.of("WARMMETAL_CONFIG", fx.home.resolve("none.yaml").toString()), "shapes", "ls");
    assertThat(noApi.code()).isEqualTo(ExitCode.USAGE);
    assertThat(noApi.err()).contains("no API URL");
  }

  @Test
  void notFoundNamesTheResource() {
    var run = fx.run("instances", "get", "i-0123456789abcdef0");
    assertThat(run.code()).isEqualTo(ExitCode.API_ERROR);
    assertThat(run.err()).startsWith("Error: NotFound: ").contains("hint: no instance i-0123456789abcdef0");
  }

  @Test
  void insufficientCapacitySaysWhenToRetry() {
    fx.api.registerMachines(1, io.warmmetal.api.testing.ApiFixture.facts(8, 32), true);
    var run = fx.run("instances", "launch", "--shape", "x86-8c-32g", "--count", "2");
    assertThat(run.code()).isEqualTo(ExitCode.API_ERROR);
    assertThat(run.err()).contains("Error: InsufficientCapacity: ").containsPattern("retry after \\d+ seconds");
  }
}
