package io.warmmetal.api.ssh;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.enrollment.AgentProcessTest;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.Sshd;
import io.warmmetal.protocol.testing.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Enrolling a running server over SSH, end to end: a real sshd on loopback, the real agent jar
 * uploaded, configured and started by the API, enrolling over the agent port, warmed by the pool;
 * then recovered over SSH.
 */
@ExtendWith(VertxExtension.class)
@Tag("processes")
class SshEnrollmentTest {
  private Sshd sshd;
  private ApiFixture fx;
  private Path installDir;
  private Path rebootMarker;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    sshd = Sshd.start();
    installDir = Files.createTempDirectory("warmmetal-install").resolve("agent");
    rebootMarker = installDir.getParent().resolve("rebooted");
    fx =
        ApiFixture.start(
            vertx,
            Map.of(
                "WARMMETAL_AGENT_JAR",
                AgentProcessTest.AGENT_JAR.toString(),
                "WARMMETAL_AGENT_INSTALL_DIR",
                installDir.toString(),
                "WARMMETAL_SSH_TIMEOUT_SECONDS",
                "30",
                "WARMMETAL_SSH_REBOOT_COMMAND",
                "touch " + rebootMarker,
                "WARMMETAL_HEARTBEAT_SECONDS",
                "1"));
  }

  @AfterEach
  void stop() throws Exception {
    Path pid = installDir.resolve("agent.pid");
    if (Files.exists(pid)) {
      ProcessHandle.of(Long.parseLong(Files.readString(pid).trim()))
          .ifPresent(ProcessHandle::destroyForcibly);
    }
    fx.close();
    sshd.close();
  }

  private String storeKey() {
    Response key =
        fx.client.post(
            "/v1/ssh-keys",
            ApiFixture.ADMIN,
            new JsonObject().put("name", "fleet").put("privateKey", sshd.clientKey));
    assertThat(key.status()).isEqualTo(201);
    assertThat(key.raw()).doesNotContain("PRIVATE KEY");
    assertThat(key.body().getString("publicKey")).isEqualTo(sshd.clientPublicKey);
    return key.body().getString("id");
  }

  private JsonObject enrollment(String keyId, String fingerprint) {
    return new JsonObject()
        .put("address", "127.0.0.1")
        .put("port", sshd.port)
        .put("user", sshd.user)
        .put("keyId", keyId)
        .put("hostKeyFingerprint", fingerprint)
        .put("labels", new JsonObject().put("rack", "r7"))
        .put(
            "agentEnvironment",
            new JsonObject()
                .put("WARMMETAL_AGENT_SIMULATE", "true")
                .put("WARMMETAL_AGENT_NAME", "ssh-enrolled"));
  }

  private JsonObject awaitEnrollment(String id, String state) throws InterruptedException {
    JsonObject[] last = new JsonObject[1];
    Await.until(
        "enrollment " + state,
        () -> {
          last[0] = fx.client.get("/v1/ssh-enrollments/" + id, ApiFixture.ADMIN).body();
          return state.equals(last[0].getString("state"));
        },
        90_000);
    return last[0];
  }

  private String machineState(String id) {
    return fx.client.get("/v1/machines/" + id, ApiFixture.ADMIN).body().getString("state");
  }

  @Test
  void aServerEnrolledOverSshRunsTheAgentJoinsThePoolAndCanBeRecovered() throws Exception {
    String keyId = storeKey();
    byte[] sealed =
        fx.db()
            .preparedQuery("SELECT private_key FROM ssh_keys WHERE id = $1")
            .execute(Tuple.of(keyId))
            .await()
            .iterator()
            .next()
            .getBuffer(0)
            .getBytes();
    assertThat(new String(sealed, StandardCharsets.ISO_8859_1)).doesNotContain("PRIVATE KEY");

    // Google-style custom method spelling, as documented.
    Response started =
        fx.client.post(
            "/v1/machines:enroll-ssh",
            ApiFixture.ADMIN,
            enrollment(keyId, sshd.hostKeyFingerprint));
    assertThat(started.status()).as(started.raw()).isEqualTo(202);
    assertThat(started.body().getString("state")).isEqualTo("installing");

    JsonObject done = awaitEnrollment(started.body().getString("id"), "enrolled");
    String machine = done.getString("machineId");
    JsonObject m = fx.client.get("/v1/machines/" + machine, ApiFixture.ADMIN).body();
    assertThat(m.getString("name")).isEqualTo("ssh-enrolled");
    assertThat(m.getString("address")).isEqualTo("127.0.0.1");
    assertThat(m.getJsonObject("labels").getString("rack")).isEqualTo("r7");

    // The settings file holds the token, readable by its owner only; nothing the API stored or
    // logged shows it.
    Path env = installDir.resolve("agent.env");
    assertThat(Files.getPosixFilePermissions(env))
        .isEqualTo(PosixFilePermissions.fromString("rw-------"));
    String token =
        Files.readAllLines(env).stream()
            .filter(l -> l.startsWith("WARMMETAL_AGENT_TOKEN="))
            .findFirst()
            .orElseThrow()
            .split("'")[1];
    assertThat(token).startsWith("wme_");
    assertThat(
            fx.count(
                "SELECT count(*) FROM events WHERE details::text LIKE '%' || $1 || '%'", token))
        .isZero();
    assertThat(
            fx.count(
                "SELECT count(*) FROM events WHERE type = 'SshEnrollment' AND reason = 'agent installed'"))
        .isEqualTo(1);
    assertThat(
            fx.count(
                "SELECT uses_left FROM enrollment_tokens t JOIN ssh_enrollments e ON e.token_id = t.id "
                    + "WHERE e.machine_id = $1",
                machine))
        .isZero();

    // It enrolls as usual: the pool prepares it.
    String shape = m.getString("shape");
    fx.client.put(
        "/v1/pools/" + shape,
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 1).put("maxWarm", 1));
    Await.until("warm", () -> "warm".equals(machineState(machine)), 60_000);

    // Recovery over SSH: the agent restarted (a new process, which connects again)...
    long firstPid = Long.parseLong(Files.readString(installDir.resolve("agent.pid")).trim());
    Response restarted =
        fx.client.post(
            "/v1/machines/" + machine + ":recover",
            ApiFixture.ADMIN,
            new JsonObject().put("action", "restart-agent"));
    assertThat(restarted.status()).as(restarted.raw()).isEqualTo(200);
    assertThat(restarted.body().getBoolean("succeeded")).as(restarted.raw()).isTrue();
    long secondPid = Long.parseLong(Files.readString(installDir.resolve("agent.pid")).trim());
    assertThat(secondPid).isNotEqualTo(firstPid);
    assertThat(gone(firstPid)).as("the first agent process has ended").isTrue();
    Await.until(
        "the new agent says hello",
        () ->
            fx.count(
                    "SELECT count(*) FROM machines WHERE id = $1 "
                        + "AND last_seen > now() - interval '2 seconds'",
                    machine)
                == 1,
        60_000);
    assertThat(machineState(machine)).isEqualTo("warm");

    // ...a reset of a machine a launch could take meanwhile is refused until it is cordoned...
    Response claimable =
        fx.client.post(
            "/v1/machines/" + machine + ":recover",
            ApiFixture.ADMIN,
            new JsonObject().put("action", "reset"));
    assertThat(claimable.status()).isEqualTo(409);
    assertThat(claimable.body().getString("message")).contains("cordon it");
    fx.client.post("/v1/machines/" + machine + "/cordon", ApiFixture.ADMIN, null);

    // ...the host reset by the agent's reset script (this test's stand-in for the shipped one; the
    // simulated agent
    // installs none), the agent restarted after it...
    Path scripts = Files.createDirectories(installDir.resolve("state/scripts"));
    Path resetRan = installDir.getParent().resolve("reset-params");
    Files.writeString(scripts.resolve("reset.sh"), "#!/bin/sh\ncat > " + resetRan + "\n");
    Files.setPosixFilePermissions(
        scripts.resolve("reset.sh"), PosixFilePermissions.fromString("rwx------"));
    Response reset =
        fx.client.post(
            "/v1/machines/" + machine + ":recover",
            ApiFixture.ADMIN,
            new JsonObject().put("action", "reset"));
    assertThat(reset.body().getBoolean("succeeded")).as(reset.raw()).isTrue();
    assertThat(Files.readString(resetRan)).isEqualTo("{}");
    assertThat(Long.parseLong(Files.readString(installDir.resolve("agent.pid")).trim()))
        .isNotEqualTo(secondPid);

    // ...and the server rebooted (the reboot command is this test's marker).
    Response rebooted =
        fx.client.post(
            "/v1/machines/" + machine + "/recover",
            ApiFixture.ADMIN,
            new JsonObject().put("action", "reboot"));
    assertThat(rebooted.status()).isEqualTo(200);
    Await.until("the reboot command ran", () -> Files.exists(rebootMarker));
    assertThat(
            fx.count(
                "SELECT count(*) FROM events WHERE type = 'MachineRecovery' AND machine_id = $1",
                machine))
        .isEqualTo(3);
  }

  /** Ended: no such process, or a zombie nobody reaped (PID 1 in a container may not). */
  private static boolean gone(long pid) throws Exception {
    Path status = Path.of("/proc/" + pid + "/status");
    return !Files.exists(status)
        || Files.readString(status).lines().anyMatch(l -> l.matches("State:\\s+Z.*"));
  }

  @Test
  void aServerPresentingAnotherHostKeyIsNotTouched() throws Exception {
    String keyId = storeKey();
    Response started =
        fx.client.post(
            "/v1/machines/enroll-ssh",
            ApiFixture.ADMIN,
            enrollment(keyId, sshd.otherFingerprint()));
    assertThat(started.status()).isEqualTo(202);
    JsonObject failed = awaitEnrollment(started.body().getString("id"), "failed");
    assertThat(failed.getString("message")).contains("host key");
    assertThat(installDir).doesNotExist();
    assertThat(fx.count("SELECT count(*) FROM machines")).isZero();
    // A key an old enrollment used can still be rotated out.
    assertThat(fx.client.delete("/v1/ssh-keys/" + keyId, ApiFixture.ADMIN).status()).isEqualTo(204);
    assertThat(
            fx.client
                .get("/v1/ssh-enrollments/" + started.body().getString("id"), ApiFixture.ADMIN)
                .body()
                .getString("keyId"))
        .isNull();
  }

  @Test
  void badRequestsAreRefusedNamingTheProblemAndLeaveNothingBehind() throws Exception {
    String keyId = storeKey();
    Response unknownKey =
        fx.client.post(
            "/v1/machines/enroll-ssh",
            ApiFixture.ADMIN,
            enrollment("sshkey-0000000000000000", sshd.hostKeyFingerprint));
    assertThat(unknownKey.status()).isEqualTo(400);
    assertThat(unknownKey.body().getString("field")).isEqualTo("keyId");

    JsonObject reserved = enrollment(keyId, sshd.hostKeyFingerprint);
    reserved.getJsonObject("agentEnvironment").put("WARMMETAL_AGENT_TOKEN", "mine");
    Response refused = fx.client.post("/v1/machines/enroll-ssh", ApiFixture.ADMIN, reserved);
    assertThat(refused.status()).isEqualTo(400);
    assertThat(refused.body().getString("field"))
        .isEqualTo("agentEnvironment.WARMMETAL_AGENT_TOKEN");

    JsonObject quoted = enrollment(keyId, sshd.hostKeyFingerprint);
    quoted.getJsonObject("agentEnvironment").put("WARMMETAL_AGENT_NAME", "x'; rm -rf /; '");
    assertThat(fx.client.post("/v1/machines/enroll-ssh", ApiFixture.ADMIN, quoted).status())
        .isEqualTo(400);

    Response notPinned =
        fx.client.post("/v1/machines/enroll-ssh", ApiFixture.ADMIN, enrollment(keyId, "MD5:00:11"));
    assertThat(notPinned.status()).isEqualTo(400);

    Response notAKey =
        fx.client.post(
            "/v1/ssh-keys",
            ApiFixture.ADMIN,
            new JsonObject()
                .put("name", "junk")
                .put(
                    "privateKey",
                    "-----BEGIN OPENSSH PRIVATE KEY-----\nnope\n-----END OPENSSH PRIVATE KEY-----\n"));
    assertThat(notAKey.status()).isEqualTo(400);
    assertThat(notAKey.body().getString("field")).isEqualTo("privateKey");
    assertThat(
            fx.client
                .post(
                    "/v1/ssh-keys",
                    ApiFixture.ADMIN,
                    new JsonObject().put("name", "fleet").put("privateKey", sshd.clientKey))
                .status())
        .isEqualTo(409);

    assertThat(fx.count("SELECT count(*) FROM ssh_enrollments")).isZero();
    assertThat(fx.count("SELECT count(*) FROM enrollment_tokens")).isZero();
    assertThat(fx.count("SELECT count(*) FROM ssh_keys")).isEqualTo(1);

    // A machine without SSH access cannot be recovered over SSH; a key no one uses can be deleted.
    String registered = fx.registerMachines(1, ApiFixture.facts(8, 32), true).get(0);
    Response noAccess =
        fx.client.post(
            "/v1/machines/" + registered + "/recover", ApiFixture.ADMIN, new JsonObject());
    assertThat(noAccess.status()).isEqualTo(409);
    assertThat(noAccess.body().getString("message")).contains("no SSH access");
    assertThat(fx.client.delete("/v1/ssh-keys/" + keyId, ApiFixture.ADMIN).status()).isEqualTo(204);
  }
}
