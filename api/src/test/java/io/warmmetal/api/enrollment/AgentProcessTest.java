package io.warmmetal.api.enrollment;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The agent as operators run it: {@code java -jar warmmetal-agent.jar}, a separate process, enrolling for real. */
@ExtendWith(VertxExtension.class)
class AgentProcessTest {
  /** Built by the agent module, which the reactor builds (and packages) before this one. */
  static final Path AGENT_JAR = Path.of("..", "agent", "target", "warmmetal-agent.jar").toAbsolutePath().normalize();

  private static Process agent(ApiFixture fx, Path stateDir, String token, Path log) throws Exception {
    assertThat(AGENT_JAR).as("the agent jar (run mvn verify from the repository root)").exists();
    ProcessBuilder pb = new ProcessBuilder(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", AGENT_JAR.toString(),
        "--api", "https://127.0.0.1:" + fx.api.agentPort(),
        "--ca-pin", fx.api.caPin().value(),
        "--state-dir", stateDir.toString(),
        "--name", "process-agent", "--address", "127.0.0.1"))
        .redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().put("WARMMETAL_AGENT_TOKEN", token);
    return pb.start();
  }

  @Test
  void theAgentProcessEnrollsOnceAndKeepsItsIdentity(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      String token = fx.client.post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject().put("uses", 1))
          .body().getString("token");
      Path stateDir = Files.createTempDirectory("warmmetal-agent-state").resolve("agent");
      Path log = Files.createTempFile("warmmetal-agent", ".log");

      Process first = agent(fx, stateDir, token, log);
      assertThat(first.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(first.exitValue()).as(Files.readString(log)).isZero();
      String machineId = Files.readString(stateDir.resolve("machine-id")).trim();
      assertThat(fx.client.get("/v1/machines/" + machineId, ApiFixture.ADMIN).body().getString("state"))
          .isEqualTo("enrolling");
      assertThat(Files.getPosixFilePermissions(stateDir.resolve("agent.key")))
          .isEqualTo(PosixFilePermissions.fromString("rw-------"));
      assertThat(Files.readString(log)).contains(machineId).doesNotContain(token);

      // Started again, it keeps its identity: no second enrollment (the one-use token is spent anyway).
      Process second = agent(fx, stateDir, token, log);
      assertThat(second.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(second.exitValue()).as(Files.readString(log)).isZero();
      assertThat(fx.count("SELECT count(*) FROM machines")).isEqualTo(1);
    }
  }
}
