package io.warmmetal.api.power;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.IpmiSim;
import io.warmmetal.fleet.SimulatedAgent;
import io.warmmetal.protocol.testing.Await;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The standby tier's whole cycle, with simulated servers whose power is a real BMC's: OpenIPMI's
 * {@code ipmi_sim} driven by {@code ipmitool}. A server's agent runs while its BMC says on and
 * stops when it says off, as a real server's would.
 */
@ExtendWith(VertxExtension.class)
@Tag("processes")
class StandbyTest {
  private static final String SHAPE = "x86-16c-64g";

  /** A simulated server: its BMC, and its agent running exactly while the BMC's power is on. */
  private static final class Server implements AutoCloseable {
    final IpmiSim bmc;
    final Path stateDir;
    final JsonObject machine;
    final Vertx vertx;
    final Enrollment enrollment;
    final WebSocketClient ws;
    final URI api;
    final String token;
    final long watcher;
    volatile SimulatedAgent agent;
    volatile boolean busy;
    volatile int boots;

    Server(Vertx vertx, Enrollment enrollment, WebSocketClient ws, URI api, String token)
        throws Exception {
      this.vertx = vertx;
      this.enrollment = enrollment;
      this.ws = ws;
      this.api = api;
      this.token = token;
      this.bmc = IpmiSim.start();
      this.stateDir = Files.createTempDirectory("standby-agent");
      this.machine =
          new JsonObject()
              .put("name", "sim")
              .put("facts", ApiFixture.facts(16, 64))
              .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
      this.watcher = vertx.setPeriodic(100, id -> follow());
    }

    /**
     * Starts or stops the agent as the power goes (on a worker: reading the BMC's power file is
     * file I/O).
     */
    private void follow() {
      if (busy) {
        return;
      }
      busy = true;
      vertx
          .executeBlocking(bmc::poweredOn, false)
          .compose(
              on -> {
                if (on && agent == null) {
                  boots++;
                  return SimulatedAgent.start(
                          vertx,
                          enrollment,
                          ws,
                          api,
                          token,
                          machine,
                          stateDir,
                          new SimulatedExecutor(
                              vertx,
                              Map.of(
                                  "prepare",
                                  Distribution.parse("fixed:50ms"),
                                  "join",
                                  Distribution.parse("fixed:50ms"),
                                  "reset",
                                  Distribution.parse("fixed:50ms")),
                              0.0,
                              new Random(boots)))
                      .onSuccess(a -> agent = a)
                      .mapEmpty();
                }
                if (!on && agent != null) {
                  SimulatedAgent running = agent;
                  agent = null;
                  return running.stop();
                }
                return Future.succeededFuture();
              })
          .onComplete(x -> busy = false);
    }

    String machineId() {
      return agent == null ? null : agent.machineId();
    }

    @Override
    public void close() throws Exception {
      vertx.cancelTimer(watcher);
      if (agent != null) {
        agent.stop().await();
      }
      bmc.close();
    }
  }

  private static String state(ApiFixture fx, String machine) {
    return fx.client.get("/v1/machines/" + machine, ApiFixture.ADMIN).body().getString("state");
  }

  /**
   * Waits for {@code n} of the channel's sweeps to finish after now — the first may have begun
   * before, so one more is counted.
   */
  private static void awaitSweeps(ApiFixture fx, int n) throws InterruptedException {
    long target = fx.api.channel().sweepsFinished() + n + 1;
    Await.until(n + " sweeps", () -> fx.api.channel().sweepsFinished() >= target);
  }

  private static long queued(ApiFixture fx, String machine) {
    return fx.count(
        "SELECT count(*) FROM commands WHERE machine_id = $1 AND status = 'queued'", machine);
  }

  private static String instanceState(ApiFixture fx, String id) {
    return fx.client.get("/v1/instances/" + id, ApiFixture.ADMIN).body().getString("state");
  }

  @Test
  void surplusMachinesAreSwitchedOffAndWokenWhenThePoolOrALaunchNeedsThem(Vertx vertx)
      throws Exception {
    try (ApiFixture fx =
        ApiFixture.start(
            vertx,
            Map.of(
                "WARMMETAL_HEARTBEAT_SECONDS",
                "1",
                "WARMMETAL_OFFLINE_AFTER_SECONDS",
                "5",
                "WARMMETAL_POOL_INTERVAL_MS",
                "200",
                "WARMMETAL_POWER_TIMEOUT_SECONDS",
                "10"))) {
      URI api = URI.create("https://127.0.0.1:" + fx.api.agentPort());
      Enrollment enrollment = new Enrollment(vertx, api, fx.api.caPin());
      WebSocketClient ws =
          vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
      String token =
          fx.client
              .post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject().put("uses", 2))
              .body()
              .getString("token");
      List<Server> servers = new ArrayList<>();
      try {
        for (int i = 0; i < 2; i++) {
          Server s = new Server(vertx, enrollment, ws, api, token);
          servers.add(s);
          s.bmc.setPower(true); // switched on by hand, to enroll
        }
        for (Server s : servers) {
          Await.until(
              "enrolled",
              () -> s.machineId() != null && "standby".equals(state(fx, s.machineId())));
          Response set =
              fx.client.put(
                  "/v1/machines/" + s.machineId() + "/power",
                  ApiFixture.ADMIN,
                  new JsonObject()
                      .put("driver", "ipmi")
                      .put("address", "127.0.0.1")
                      .put("port", s.bmc.port)
                      .put("username", IpmiSim.USER)
                      .put("password", IpmiSim.PASSWORD));
          assertThat(set.status()).as(set.raw()).isEqualTo(200);
          assertThat(set.raw()).doesNotContain(IpmiSim.PASSWORD);
        }

        // One warm machine wanted: one is prepared, the other — surplus in standby — is switched
        // off.
        fx.client.put(
            "/v1/pools/" + SHAPE,
            ApiFixture.ADMIN,
            new JsonObject().put("minWarm", 1).put("maxWarm", 1));
        Await.until(
            "one warm, one off",
            () ->
                servers.stream()
                            .filter(
                                s -> {
                                  try {
                                    return !s.bmc.poweredOn();
                                  } catch (Exception e) {
                                    return false;
                                  }
                                })
                            .count()
                        == 1
                    && fx.count("SELECT count(*) FROM machines WHERE state = 'warm'") == 1,
            60_000);
        Server warm = servers.stream().filter(s -> s.agent != null).findFirst().orElseThrow();
        Server off = servers.get(servers.indexOf(warm) == 0 ? 1 : 0);
        String offId =
            (String)
                fx.db()
                    .preparedQuery("SELECT id FROM machines WHERE state = 'standby'")
                    .execute()
                    .await()
                    .iterator()
                    .next()
                    .getValue(0);
        JsonObject power =
            fx.client.get("/v1/machines/" + offId + "/power?observe=true", ApiFixture.ADMIN).body();
        assertThat(power.getString("powerState")).isEqualTo("off");
        assertThat(power.getString("observed")).isEqualTo("off");
        assertThat(power.getBoolean("hasPassword")).isTrue();
        // Switched off, it is silent, and that is expected: past the offline threshold, three
        // sweeps later (each
        // would take a silent machine offline), it is still standby.
        Await.until(
            "silent for longer than the offline threshold",
            () ->
                fx.count(
                        "SELECT count(*) FROM machines"
                            + " WHERE id = $1 AND last_seen < now() - interval '5 seconds'",
                        offId)
                    == 1);
        awaitSweeps(fx, 3);
        assertThat(state(fx, offId)).isEqualTo("standby");

        // Without waiting for standby, two machines cannot be had; a launch may wait instead.
        Response refused =
            fx.client.post(
                "/v1/instances",
                ApiFixture.ADMIN,
                new JsonObject().put("shape", SHAPE).put("minCount", 2));
        assertThat(refused.status()).isEqualTo(503);
        assertThat(
                refused
                    .body()
                    .getJsonObject("details")
                    .getJsonObject("available")
                    .getJsonObject(SHAPE)
                    .getInteger("standby"))
            .isEqualTo(1);
        Response launched =
            fx.client.post(
                "/v1/instances",
                ApiFixture.ADMIN,
                new JsonObject().put("shape", SHAPE).put("minCount", 2).put("allowStandby", true));
        assertThat(launched.status()).as(launched.raw()).isEqualTo(201);
        JsonArray instances = launched.body().getJsonArray("instances");
        for (Object o : instances) {
          String id = ((JsonObject) o).getString("id");
          Await.until("running", () -> "running".equals(instanceState(fx, id)), 60_000);
        }
        assertThat(off.bmc.poweredOn()).isTrue();
        assertThat(off.boots).isEqualTo(2);
        assertThat(
                fx.count(
                    "SELECT count(*) FROM events WHERE machine_id = $1 AND type = 'MachinePower'",
                    offId))
            .isEqualTo(2); // off, then on
        // The pool is short now (both in use): nothing is left to wake, and nothing was switched
        // twice.
        for (Object o : instances) {
          fx.client.delete("/v1/instances/" + ((JsonObject) o).getString("id"), ApiFixture.ADMIN);
        }

        // Both back: warm two, maxWarm one — the surplus goes to standby and off again; then the
        // pool needs it:
        // with minWarm 2 it is switched on and prepared, and becomes warm once its agent is back.
        Await.until(
            "one off again",
            () ->
                fx.count(
                            "SELECT count(*) FROM machines WHERE state = 'standby' "
                                + "AND power_state = 'off'")
                        == 1
                    && fx.count("SELECT count(*) FROM machines WHERE state = 'warm'") == 1,
            30_000);
        fx.client.put(
            "/v1/pools/" + SHAPE,
            ApiFixture.ADMIN,
            new JsonObject().put("minWarm", 2).put("maxWarm", 2));
        Await.until(
            "both warm",
            () ->
                fx.count(
                        "SELECT count(*) FROM machines WHERE state = 'warm' "
                            + "AND power_state IS DISTINCT FROM 'off'")
                    == 2,
            30_000);
        assertThat(warm.bmc.poweredOn()).isTrue();
        assertThat(off.bmc.poweredOn()).isTrue();
        assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'offline'")).isZero();
      } finally {
        for (Server s : servers) {
          s.close();
        }
        ws.close().await();
        enrollment.close().await();
      }
    }
  }

  @Test
  void aMachineRecordedOffGetsNoCommandsUntilItIsSwitchedOnAgain(Vertx vertx) throws Exception {
    try (ApiFixture fx =
            ApiFixture.start(
                vertx,
                Map.of("WARMMETAL_HEARTBEAT_SECONDS", "1", "WARMMETAL_POOL_INTERVAL_MS", "200"));
        IpmiSim bmc = IpmiSim.start()) {
      URI api = URI.create("https://127.0.0.1:" + fx.api.agentPort());
      Enrollment enrollment = new Enrollment(vertx, api, fx.api.caPin());
      WebSocketClient ws =
          vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
      String token =
          fx.client
              .post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject())
              .body()
              .getString("token");
      // An agent that stays connected whatever the BMC says: the case of a switch-off still under
      // way.
      SimulatedAgent agent =
          SimulatedAgent.start(
                  vertx,
                  enrollment,
                  ws,
                  api,
                  token,
                  new JsonObject()
                      .put("name", "sim")
                      .put("facts", ApiFixture.facts(16, 64))
                      .put(
                          "identity",
                          new JsonObject().put("systemUuid", UUID.randomUUID().toString())),
                  Files.createTempDirectory("held"),
                  new SimulatedExecutor(
                      vertx,
                      Map.of(
                          "prepare",
                          Distribution.parse("fixed:50ms"),
                          "join",
                          Distribution.parse("fixed:50ms")),
                      0.0,
                      new Random(3)))
              .await();
      String machine = agent.machineId();
      Await.until("standby", () -> "standby".equals(state(fx, machine)));
      JsonObject ipmi =
          new JsonObject()
              .put("driver", "ipmi")
              .put("address", "127.0.0.1")
              .put("port", bmc.port)
              .put("username", IpmiSim.USER)
              .put("password", IpmiSim.PASSWORD);
      fx.client.put("/v1/machines/" + machine + "/power", ApiFixture.ADMIN, ipmi);
      Await.until(
          "switched off",
          () ->
              fx.count(
                      "SELECT count(*) FROM machines WHERE id = $1 AND power_state = 'off'",
                      machine)
                  == 1);
      // The BMC stops answering (wrong password): the machine cannot be switched on again for now.
      fx.client.put(
          "/v1/machines/" + machine + "/power",
          ApiFixture.ADMIN,
          ipmi.copy().put("password", "wrong"));

      String id =
          fx.client
              .post(
                  "/v1/instances",
                  ApiFixture.ADMIN,
                  new JsonObject().put("shape", SHAPE).put("allowStandby", true))
              .body()
              .getJsonArray("instances")
              .getJsonObject(0)
              .getString("id");
      // Three deliveries to the connected agent since the launch committed (the announcement's,
      // then each sweep's
      // catch-up of queued commands): any would have sent what was deliverable.
      long deliveries = fx.api.channel().deliveriesFinished();
      Await.until(
          "three deliveries since the launch (or the commands sent)",
          () -> fx.api.channel().deliveriesFinished() >= deliveries + 3 || queued(fx, machine) < 2);
      assertThat(queued(fx, machine))
          .as("prepare and join held while the machine is recorded off")
          .isEqualTo(2);
      assertThat(state(fx, machine))
          .isEqualTo("preparing"); // claimed and off: not offline while it should boot

      fx.client.put("/v1/machines/" + machine + "/power", ApiFixture.ADMIN, ipmi);
      assertThat(
              fx.client
                  .post("/v1/machines/" + machine + ":power-on", ApiFixture.ADMIN, null)
                  .status())
          .isEqualTo(200);
      Await.until("running", () -> "running".equals(instanceState(fx, id)), 60_000);
      agent.stop().await();
      ws.close().await();
      enrollment.close().await();
    }
  }
}
