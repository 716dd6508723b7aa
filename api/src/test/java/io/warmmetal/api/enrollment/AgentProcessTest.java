package io.warmmetal.api.enrollment;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.protocol.testing.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The agent as operators run it: {@code java -jar warmmetal-agent.jar}, a separate process,
 * enrolling for real.
 */
@ExtendWith(VertxExtension.class)
@Tag("processes")
public class AgentProcessTest {
  /** Built by the agent module, which the reactor builds (and packages) before this one. */
  public static final Path AGENT_JAR = moduleJar("agent");

  /**
   * A module's jar ({@code warmmetal-<module>.jar}), from the api module or the repository root
   * (where the JVM runs).
   */
  public static Path moduleJar(String module) {
    String path = module + "/target/warmmetal-" + module + ".jar";
    for (String candidate : new String[] {"../" + path, path}) {
      Path jar = Path.of(candidate).toAbsolutePath().normalize();
      if (Files.exists(jar)) {
        return jar;
      }
    }
    return Path.of("../" + path).toAbsolutePath().normalize();
  }

  /**
   * {@code java -jar warmmetal-agent.jar} against the fixture's agent port, with the token and
   * extra flags.
   */
  private static Process agent(
      ApiFixture fx, Path stateDir, String token, Path log, String... flags) throws Exception {
    assertThat(AGENT_JAR)
        .as("the agent jar (mvn -B verify -Pprocesses packages it first)")
        .exists();
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m",
                "-jar",
                AGENT_JAR.toString(),
                "--api",
                "https://127.0.0.1:" + fx.api.agentPort(),
                "--ca-pin",
                fx.api.caPin().value(),
                "--state-dir",
                stateDir.toString(),
                "--name",
                "process-agent",
                "--address",
                "127.0.0.1"));
    command.addAll(List.of(flags));
    ProcessBuilder pb =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().put("WARMMETAL_AGENT_TOKEN", token);
    return pb.start();
  }

  private static Process runningAgent(
      ApiFixture fx, Path stateDir, String token, Path log, String durations) throws Exception {
    return agent(fx, stateDir, token, log, "--simulate", "--durations", durations);
  }

  @Test
  void anAgentProcessRunsTheLifecycleAndItsDeathMidJoinQuarantinesTheMachine(Vertx vertx)
      throws Exception {
    try (ApiFixture fx =
        ApiFixture.start(
            vertx,
            Map.of(
                "WARMMETAL_HEARTBEAT_SECONDS",
                "1",
                "WARMMETAL_OFFLINE_AFTER_SECONDS",
                "4",
                "WARMMETAL_JOIN_TIMEOUT_SECONDS",
                "4"))) {
      // Both agents run on this host and so report the same hardware: the second re-enrolls it.
      String token =
          fx.client
              .post(
                  "/v1/enrollment-tokens",
                  ApiFixture.ADMIN,
                  new JsonObject().put("uses", 2).put("allowReenroll", true))
              .body()
              .getString("token");
      Path log = Files.createTempFile("warmmetal-agent", ".log");
      Path quick = Files.createTempDirectory("agent-quick");
      Process agent =
          runningAgent(
              fx,
              quick,
              token,
              log,
              "prepare=fixed:100ms,join=fixed:100ms,reset=fixed:100ms,reboot=fixed:0s");
      try {
        Await.until("enrolled", () -> Files.exists(quick.resolve("machine-id")));
        String machine = Files.readString(quick.resolve("machine-id")).trim();
        fx.client.put(
            "/v1/pools/x86-" + cpus(fx, machine),
            ApiFixture.ADMIN,
            new JsonObject().put("minWarm", 1).put("maxWarm", 1));
        Await.until("warm", () -> "warm".equals(machineState(fx, machine)));
        String id = launch(fx, machine);
        Await.until("running", () -> "running".equals(instanceState(fx, id)));
        fx.client.delete("/v1/instances/" + id, ApiFixture.ADMIN);
        Await.until("terminated", () -> "terminated".equals(instanceState(fx, id)));
        Await.until("warm again", () -> "warm".equals(machineState(fx, machine)));
      } finally {
        agent.destroyForcibly().waitFor();
      }

      // An agent whose join takes long is killed in the middle of it.
      Path slow = Files.createTempDirectory("agent-slow");
      Process doomed =
          runningAgent(
              fx, slow, token, log, "prepare=fixed:100ms,join=fixed:60s,reset=fixed:100ms");
      Await.until("enrolled", () -> Files.exists(slow.resolve("machine-id")));
      String machine = Files.readString(slow.resolve("machine-id")).trim();
      fx.client.put(
          "/v1/pools/x86-" + cpus(fx, machine),
          ApiFixture.ADMIN,
          new JsonObject().put("minWarm", 2).put("maxWarm", 2));
      Await.until("warm", () -> "warm".equals(machineState(fx, machine)));
      String id = launch(fx, machine);
      Await.until(
          "the join is under way",
          () ->
              fx.count(
                      "SELECT count(*) FROM commands WHERE instance_id = $1 AND status = 'delivered'",
                      id)
                  == 1);
      doomed.destroyForcibly().waitFor(); // kill -9, mid-join
      Await.until("the instance fails", () -> "failed".equals(instanceState(fx, id)));
      assertThat(machineState(fx, machine)).isIn("failed", "offline");
      assertThat(
              fx.count(
                  "SELECT count(*) FROM events WHERE machine_id = $1 AND type = 'MachineState'"
                      + " AND to_state = 'failed'",
                  machine))
          .isEqualTo(1);
    }
  }

  /** The shape of the host the process agent reported (this machine's real facts). */
  private static String cpus(ApiFixture fx, String machine) {
    return fx.client
        .get("/v1/machines/" + machine, ApiFixture.ADMIN)
        .body()
        .getString("shape")
        .substring(4);
  }

  private static String machineState(ApiFixture fx, String machine) {
    return fx.client.get("/v1/machines/" + machine, ApiFixture.ADMIN).body().getString("state");
  }

  private static String instanceState(ApiFixture fx, String id) {
    return fx.client.get("/v1/instances/" + id, ApiFixture.ADMIN).body().getString("state");
  }

  /** Launches on this machine's shape; with one warm machine of it, the launch gets this one. */
  private static String launch(ApiFixture fx, String machine) {
    String shape =
        fx.client.get("/v1/machines/" + machine, ApiFixture.ADMIN).body().getString("shape");
    JsonObject r =
        fx.client
            .post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", shape))
            .body();
    assertThat(r.getJsonArray("instances").getJsonObject(0).getString("machineId"))
        .isEqualTo(machine);
    return r.getJsonArray("instances").getJsonObject(0).getString("id");
  }

  @Test
  void theAgentProcessEnrollsOnceAndKeepsItsIdentity(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      String token =
          fx.client
              .post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject().put("uses", 1))
              .body()
              .getString("token");
      Path stateDir = Files.createTempDirectory("warmmetal-agent-state").resolve("agent");
      Path log = Files.createTempFile("warmmetal-agent", ".log");

      Process first = agent(fx, stateDir, token, log, "--enroll-only");
      assertThat(first.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(first.exitValue()).as(Files.readString(log)).isZero();
      String machineId = Files.readString(stateDir.resolve("machine-id")).trim();
      assertThat(
              fx.client
                  .get("/v1/machines/" + machineId, ApiFixture.ADMIN)
                  .body()
                  .getString("state"))
          .isEqualTo("enrolling");
      assertThat(Files.getPosixFilePermissions(stateDir.resolve("agent.key")))
          .isEqualTo(PosixFilePermissions.fromString("rw-------"));
      assertThat(Files.readString(log)).contains(machineId).doesNotContain(token);

      // Started again, it keeps its identity: no second enrollment (the one-use token is spent
      // anyway).
      Process second = agent(fx, stateDir, token, log, "--enroll-only");
      assertThat(second.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(second.exitValue()).as(Files.readString(log)).isZero();
      assertThat(fx.count("SELECT count(*) FROM machines")).isEqualTo(1);

      // Its certificate due for renewal (renew-before longer than its life), the agent renews it
      // and keeps it.
      String before = Files.readString(stateDir.resolve("agent.crt"));
      Process third = agent(fx, stateDir, token, log, "--enroll-only", "--renew-before", "P400D");
      assertThat(third.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(third.exitValue()).as(Files.readString(log)).isZero();
      assertThat(Files.readString(stateDir.resolve("agent.crt"))).isNotEqualTo(before);
      assertThat(Files.readString(stateDir.resolve("machine-id")).trim()).isEqualTo(machineId);
      assertThat(Files.getPosixFilePermissions(stateDir.resolve("agent.key")))
          .isEqualTo(PosixFilePermissions.fromString("rw-------"));
      X509Certificate renewed =
          (X509Certificate)
              CertificateFactory.getInstance("X.509")
                  .generateCertificate(Files.newInputStream(stateDir.resolve("agent.crt")));
      assertThat(
              fx.count(
                  "SELECT count(*) FROM machines WHERE id = $1 AND next_cert_serial = $2",
                  machineId,
                  renewed.getSerialNumber().toString(16)))
          .isEqualTo(1);
    }
  }
}
