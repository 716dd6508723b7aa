package io.warmmetal.api.faults;

import static io.warmmetal.api.testing.ApiProcess.count;
import static io.warmmetal.api.testing.ApiProcess.rows;
import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.ApiProcess;
import io.warmmetal.api.testing.TestDatabase;
import io.warmmetal.fleet.SimulatedAgent;
import io.warmmetal.protocol.testing.Await;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two API replicas (separate JVMs) on one database, simulated agents connected to both through a
 * loopback TCP proxy (agents know one URL; the proxy sends each new connection to a live replica,
 * alternating), and one replica killed with SIGKILL in the middle of a storm of launches: its
 * agents reconnect to the other, every launch's answer lost with it is retried there, and every
 * launched instance reaches running with its join run exactly once — no command lost, none run
 * twice. {@code -Dwarmmetal.faults.agents} (24) sizes it.
 */
@ExtendWith(VertxExtension.class)
@Tag("processes")
class ReplicaKillTest {
  private static final int AGENTS = Integer.getInteger("warmmetal.faults.agents", 24);
  private static final String SHAPE = "x86-16c-64g";

  /** Every command an agent's executor ran: command id -> runs. */
  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

  @Test
  void aReplicaKilledMidStormLosesNoCommandAndRunsNoneTwice(Vertx vertx) throws Exception {
    long started = System.currentTimeMillis();
    String db = TestDatabase.freshDatabaseUrl();
    Path data = Files.createTempDirectory("warmmetal-replica-kill");
    CertificateAuthority ca =
        CertificateAuthority.loadOrCreate(data, Optional.empty(), Optional.empty());
    Map<String, String> env = new HashMap<>();
    env.put("WARMMETAL_DATABASE_URL", db);
    env.put("WARMMETAL_DATA_DIR", data.toString());
    env.put("WARMMETAL_ADMIN_TOKEN", ApiFixture.ADMIN);
    env.put("WARMMETAL_HEARTBEAT_SECONDS", "2");
    env.put("WARMMETAL_POOL_INTERVAL_MS", "500");
    List<SimulatedAgent> agents = new ArrayList<>();
    try (ApiProcess a = ApiProcess.start("replica-a", env);
        ApiProcess b = ApiProcess.start("replica-b", env);
        Connection sql = ApiProcess.jdbc(db)) {
      List<ApiProcess> replicas = List.of(a, b);
      AtomicInteger turn = new AtomicInteger();
      NetClient net = vertx.createNetClient();
      NetServer proxy =
          vertx
              .createNetServer()
              .connectHandler(
                  in -> {
                    in.pause();
                    connectToLive(net, replicas, turn.getAndIncrement(), 0)
                        .onComplete(
                            ar -> {
                              if (ar.failed()) {
                                in.close();
                                return;
                              }
                              NetSocket out = ar.result();
                              in.pipeTo(out);
                              out.pipeTo(in);
                              in.resume();
                            });
                  })
              .listen(0, "127.0.0.1")
              .await();
      URI port = URI.create("https://127.0.0.1:" + proxy.actualPort());

      Enrollment enrollment = new Enrollment(vertx, port, ca.pin());
      WebSocketClient ws =
          vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
      WebClient http = WebClient.create(vertx);
      String enrollToken =
          http.post(a.httpPort, "127.0.0.1", "/v1/enrollment-tokens")
              .putHeader("Authorization", "Bearer " + ApiFixture.ADMIN)
              .sendJsonObject(new JsonObject().put("uses", AGENTS))
              .await()
              .bodyAsJsonObject()
              .getString("token");
      for (int i = 0; i < AGENTS; i++) {
        JsonObject machine =
            new JsonObject()
                .put("name", "sim-" + i)
                .put("facts", ApiFixture.facts(16, 64))
                .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
        agents.add(
            SimulatedAgent.start(
                    vertx,
                    enrollment,
                    ws,
                    port,
                    enrollToken,
                    machine,
                    Files.createTempDirectory("sim"),
                    executor(vertx, i))
                .await());
      }
      http.put(b.httpPort, "127.0.0.1", "/v1/pools/" + SHAPE)
          .putHeader("Authorization", "Bearer " + ApiFixture.ADMIN)
          .sendJsonObject(new JsonObject().put("minWarm", AGENTS).put("maxWarm", AGENTS))
          .await();
      Await.until(
          "every agent warm",
          () -> count(sql, "SELECT count(*) FROM machines WHERE state = 'warm'") == AGENTS,
          60_000);

      // The storm, through both replicas; replica A dies once a third has answered.
      Map<String, Future<Integer>> launches = new HashMap<>();
      AtomicInteger answered = new AtomicInteger();
      for (int i = 0; i < AGENTS; i++) {
        String clientToken = "storm-" + i;
        launches.put(
            clientToken,
            launch(http, (i % 2 == 0 ? a : b).httpPort, clientToken)
                .onSuccess(x -> answered.incrementAndGet()));
      }
      Await.until(
          "a third answered",
          () ->
              answered.get() >= AGENTS / 3
                  || launches.values().stream().allMatch(Future::isComplete),
          60_000);
      a.kill();
      long killedAt = System.currentTimeMillis();
      Future.join(new ArrayList<>(launches.values())).otherwiseEmpty().await();
      int lost = 0;
      for (var e : launches.entrySet()) {
        if (e.getValue().failed()) {
          lost++;
          assertThat(launch(http, b.httpPort, e.getKey()).await())
              .as("retry of " + e.getKey())
              .isIn(200, 201);
        } else {
          assertThat(e.getValue().result()).isIn(200, 201);
        }
      }

      Await.until(
          "every instance running",
          () -> count(sql, "SELECT count(*) FROM instances WHERE state = 'running'") == AGENTS,
          90_000);
      long recovered = System.currentTimeMillis() - killedAt;
      assertThat(count(sql, "SELECT count(*) FROM instances")).isEqualTo(AGENTS);
      assertThat(count(sql, "SELECT count(*) FROM machines WHERE state = 'in-use'"))
          .isEqualTo(AGENTS);
      // Each instance's join ran exactly once, on its machine; no command of any kind ran twice.
      List<String> joins =
          rows(
              sql,
              "SELECT c.id FROM commands c JOIN instances i ON i.id = c.instance_id"
                  + " WHERE c.type = 'join' AND c.status = 'succeeded'");
      assertThat(joins).hasSize(AGENTS);
      joins.forEach(j -> assertThat(runs.get(j)).as("runs of join " + j).hasValue(1));
      assertThat(
              runs.entrySet().stream().filter(e -> e.getValue().get() > 1).map(Map.Entry::getKey))
          .as("commands run twice")
          .isEmpty();
      assertThat(
              count(sql, "SELECT count(*) FROM commands WHERE status IN ('queued', 'delivered')"))
          .as("commands left open")
          .isZero();
      System.out.printf(
          "replica kill: %d agents over 2 replicas, %d launches (%d answers lost with replica A,"
              + " retried on B), every instance running %d ms after the kill, %d commands run once each, %d ms%n",
          AGENTS, AGENTS, lost, recovered, runs.size(), System.currentTimeMillis() - started);
    } finally {
      for (SimulatedAgent agent : agents) {
        agent.stop().otherwiseEmpty().await();
      }
    }
  }

  private Executor executor(Vertx vertx, int seed) {
    SimulatedExecutor sim =
        new SimulatedExecutor(
            vertx,
            Map.of(
                "prepare",
                Distribution.parse("fixed:50ms"),
                "join",
                Distribution.parse("fixed:300ms"),
                "reset",
                Distribution.parse("fixed:50ms")),
            0.0,
            new Random(seed));
    return (command, progress) -> {
      runs.computeIfAbsent(command.id(), k -> new AtomicInteger()).incrementAndGet();
      return sim.run(command, progress);
    };
  }

  /** A connection to a live replica, starting with the one whose turn it is. */
  private static Future<NetSocket> connectToLive(
      NetClient net, List<ApiProcess> replicas, int turn, int tried) {
    if (tried == replicas.size()) {
      return Future.failedFuture("no replica is up");
    }
    ApiProcess replica = replicas.get((turn + tried) % replicas.size());
    return net.connect(replica.agentPort, "127.0.0.1")
        .recover(err -> connectToLive(net, replicas, turn, tried + 1));
  }

  private static Future<Integer> launch(WebClient http, int port, String clientToken) {
    return http.request(HttpMethod.POST, port, "127.0.0.1", "/v1/instances")
        .timeout(30_000)
        .putHeader("Authorization", "Bearer " + ApiFixture.ADMIN)
        .sendJsonObject(new JsonObject().put("shape", SHAPE).put("clientToken", clientToken))
        .map(r -> r.statusCode());
  }
}
