package io.warmmetal.api.channel;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.TestDatabase;
import io.warmmetal.fleet.SimulatedAgent;
import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.testing.Await;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Several API replicas on one database, and an API restart under connected agents. */
@ExtendWith(VertxExtension.class)
class ReplicasTest {
  private static final String SHAPE = "x86-16c-64g";
  private final List<Command> seen = new CopyOnWriteArrayList<>();

  private Executor simulated(Vertx vertx) {
    SimulatedExecutor sim =
        new SimulatedExecutor(
            vertx,
            Map.of(
                "prepare",
                Distribution.parse("fixed:20ms"),
                "join",
                Distribution.parse("fixed:20ms"),
                "reset",
                Distribution.parse("fixed:20ms")),
            0.0,
            new Random(2));
    return (command, progress) -> {
      seen.add(command);
      return sim.run(command, progress);
    };
  }

  private static String state(ApiFixture fx, String machineId) {
    return fx.client.get("/v1/machines/" + machineId, ApiFixture.ADMIN).body().getString("state");
  }

  private static String instanceState(ApiFixture fx, String id) {
    return fx.client.get("/v1/instances/" + id, ApiFixture.ADMIN).body().getString("state");
  }

  private SimulatedAgent agent(
      Vertx vertx,
      ApiFixture fx,
      Enrollment enrollment,
      WebSocketClient ws,
      URI port,
      Path stateDir)
      throws Exception {
    String token =
        fx.client
            .post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject())
            .body()
            .getString("token");
    JsonObject machine =
        new JsonObject()
            .put("name", "sim")
            .put("facts", ApiFixture.facts(16, 64))
            .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
    return SimulatedAgent.start(
            vertx, enrollment, ws, port, token, machine, stateDir, simulated(vertx))
        .await();
  }

  @Test
  void agentsOnOneReplicaLaunchesThroughAnother(Vertx vertx) throws Exception {
    String db = TestDatabase.freshDatabaseUrl();
    Path data = Files.createTempDirectory("warmmetal-replicas");
    // No sweep within the test (an hour's heartbeat): only the announcement across replicas can
    // deliver.
    Map<String, String> shared =
        Map.of(
            "WARMMETAL_DATABASE_URL",
            db,
            "WARMMETAL_DATA_DIR",
            data.toString(),
            "WARMMETAL_HEARTBEAT_SECONDS",
            "3600",
            "WARMMETAL_OFFLINE_AFTER_SECONDS",
            "86400");
    try (ApiFixture one = ApiFixture.start(vertx, shared);
        ApiFixture two = ApiFixture.start(vertx, shared)) {
      URI port = URI.create("https://127.0.0.1:" + one.api.agentPort());
      Enrollment enrollment = new Enrollment(vertx, port, one.api.caPin());
      WebSocketClient ws =
          vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
      SimulatedAgent agent =
          agent(vertx, one, enrollment, ws, port, Files.createTempDirectory("sim"));
      Await.until("standby", () -> "standby".equals(state(two, agent.machineId())));
      assertThat(one.api.channel().connectedAgents()).isEqualTo(1);
      assertThat(two.api.channel().connectedAgents()).isZero();

      // Everything through replica two; the commands reach the agent held by replica one —
      // announced across, as
      // no heartbeat's catch-up comes in the test.
      two.client.put(
          "/v1/pools/" + SHAPE,
          ApiFixture.ADMIN,
          new JsonObject().put("minWarm", 1).put("maxWarm", 1));
      Await.until("warm", () -> "warm".equals(state(two, agent.machineId())));
      String id =
          two.client
              .post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", SHAPE))
              .body()
              .getJsonArray("instances")
              .getJsonObject(0)
              .getString("id");
      Await.until("running", () -> "running".equals(instanceState(two, id)));
      assertThat(one.api.channel().sweepsFinished() + two.api.channel().sweepsFinished())
          .as("sweeps")
          .isZero();
      agent.stop().await();
      ws.close().await();
      enrollment.close().await();
    }
  }

  @Test
  void anApiRestartLosesNoCommandAndRunsNoneTwice(Vertx vertx) throws Exception {
    Map<String, String> env = new HashMap<>();
    env.put("WARMMETAL_DATABASE_URL", TestDatabase.freshDatabaseUrl());
    env.put("WARMMETAL_DATA_DIR", Files.createTempDirectory("warmmetal-restart").toString());
    try (ServerSocket probe = new ServerSocket(0)) {
      env.put(
          "WARMMETAL_AGENT_PORT",
          String.valueOf(probe.getLocalPort())); // the agent reconnects to the same port
    }
    ApiFixture first = ApiFixture.start(vertx, env);
    URI port = URI.create("https://127.0.0.1:" + first.api.agentPort());
    Enrollment enrollment = new Enrollment(vertx, port, first.api.caPin());
    WebSocketClient ws =
        vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
    SimulatedAgent agent =
        agent(vertx, first, enrollment, ws, port, Files.createTempDirectory("sim"));
    first.client.put(
        "/v1/pools/" + SHAPE,
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 1).put("maxWarm", 1));
    Await.until("warm", () -> "warm".equals(state(first, agent.machineId())));
    first.close();

    // While the API is down, nothing can reach the agent; a launch is made as soon as the API is
    // back.
    ApiFixture second = ApiFixture.start(vertx, env);
    try {
      // As a client would: a 503 (its machine not back yet, say) is retried, and named if it lasts.
      AtomicReference<Response> launched = new AtomicReference<>();
      Await.until(
          "a launch accepted by the restarted API",
          () -> {
            launched.set(
                second.client.post(
                    "/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", SHAPE)));
            assertThat(launched.get().status()).as(launched.get().raw()).isIn(201, 503);
            return launched.get().status() == 201;
          },
          30_000,
          () -> "the last answer: " + launched.get().raw());
      String id = launched.get().body().getJsonArray("instances").getJsonObject(0).getString("id");
      // The agent's reconnect backoff doubled while the API was down (up to 16 s after a slow
      // restart).
      Await.until(
          "the reconnected agent joins", () -> "running".equals(instanceState(second, id)), 90_000);
      assertThat(seen.stream().map(c -> c.kind().wire())).containsExactly("prepare", "join");
      assertThat(seen.stream().map(Command::id).distinct()).hasSize(seen.size());
    } finally {
      agent.stop().await();
      ws.close().await();
      enrollment.close().await();
      second.close();
    }
  }
}
