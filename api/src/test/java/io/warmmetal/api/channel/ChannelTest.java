package io.warmmetal.api.channel;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.UpgradeRejectedException;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.TrustOptions;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.commands.Outcome;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.enrollment.AgentIdentity;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.fleet.SimulatedAgent;
import io.warmmetal.protocol.PinnedTrustManager;
import io.warmmetal.protocol.channel.Channel;
import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.commands.CommandKind;
import io.warmmetal.protocol.commands.JoinParams;
import io.warmmetal.protocol.testing.Await;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Real agents (in this JVM) on the real channel: mutual TLS, pushed commands, results driving the
 * lifecycle.
 */
@ExtendWith(VertxExtension.class)
class ChannelTest {
  private static final String SHAPE = "x86-16c-64g";

  private Vertx vertx;
  private ApiFixture fx;
  private Enrollment enrollment;
  private WebSocketClient ws;
  private URI agentPort;
  private String token;
  private final List<Command> seen = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    this.vertx = vertx;
    // Offline after five missed heartbeats and joins timed out after 5 s: short for the tests that
    // wait for them,
    // long enough that a loaded machine's pauses take no live agent offline and fail no 20 ms join.
    fx =
        ApiFixture.start(
            vertx,
            Map.of(
                "WARMMETAL_HEARTBEAT_SECONDS",
                "1",
                "WARMMETAL_OFFLINE_AFTER_SECONDS",
                "5",
                "WARMMETAL_JOIN_TIMEOUT_SECONDS",
                "5"));
    agentPort = URI.create("https://127.0.0.1:" + fx.api.agentPort());
    enrollment = new Enrollment(vertx, agentPort, fx.api.caPin());
    ws = vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
    token =
        fx.client
            .post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject().put("uses", 10))
            .body()
            .getString("token");
  }

  @AfterEach
  void stop() {
    ws.close().await();
    enrollment.close().await();
    fx.close();
  }

  private Executor simulated() {
    SimulatedExecutor sim =
        new SimulatedExecutor(
            vertx,
            Map.of(
                "prepare",
                Distribution.parse("fixed:40ms"),
                "join",
                Distribution.parse("fixed:20ms"),
                "reset",
                Distribution.parse("fixed:40ms")),
            0.0,
            new Random(1));
    return (command, progress) -> {
      seen.add(command);
      return sim.run(command, progress);
    };
  }

  private SimulatedAgent agent(Executor executor) throws Exception {
    JsonObject machine =
        new JsonObject()
            .put("name", "sim-" + UUID.randomUUID().toString().substring(0, 8))
            .put("facts", ApiFixture.facts(16, 64))
            .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
    return SimulatedAgent.start(
            vertx,
            enrollment,
            ws,
            agentPort,
            token,
            machine,
            Files.createTempDirectory("warmmetal-sim"),
            executor)
        .await();
  }

  private String state(String machineId) {
    return fx.client.get("/v1/machines/" + machineId, ApiFixture.ADMIN).body().getString("state");
  }

  @Test
  void launchJoinRunTerminateResetWarmThroughTheChannel() throws Exception {
    SimulatedAgent agent = agent(simulated());
    Await.until(
        "the agent's hello makes the machine standby",
        () -> "standby".equals(state(agent.machineId())));

    fx.client.put(
        "/v1/pools/" + SHAPE,
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 1).put("maxWarm", 1));
    Await.until("prepared and warm", () -> "warm".equals(state(agent.machineId())));

    String bootstrap = "abcdef.0123456789abcdef";
    var launched =
        fx.client.post(
            "/v1/instances",
            ApiFixture.ADMIN,
            new JsonObject()
                .put("shape", SHAPE)
                .put(
                    "kubernetes",
                    new JsonObject()
                        .put("apiServer", "10.0.0.1:6443")
                        .put("caCertHash", "sha256:" + "ab".repeat(32))
                        .put("bootstrapToken", bootstrap)
                        .put("nodeLabels", new JsonObject().put("pool", "a"))));
    assertThat(launched.status())
        .as(launched.raw() + "; machines: " + fx.client.get("/v1/machines", ApiFixture.ADMIN).raw())
        .isEqualTo(201);
    JsonObject instance = launched.body().getJsonArray("instances").getJsonObject(0);
    String id = instance.getString("id");
    Await.until(
        "the instance runs",
        () ->
            "running"
                .equals(
                    fx.client
                        .get("/v1/instances/" + id, ApiFixture.ADMIN)
                        .body()
                        .getString("state")));
    assertThat(state(agent.machineId())).isEqualTo("in-use");

    // The join reached the agent with what it needs, the bootstrap token included (over mutual TLS
    // only).
    Command join =
        seen.stream().filter(c -> c.kind() == CommandKind.JOIN).findFirst().orElseThrow();
    assertThat(join.instanceId()).isEqualTo(id);
    JoinParams params = (JoinParams) join.params();
    assertThat(params.kubernetes().bootstrapToken()).isEqualTo(bootstrap);
    assertThat(params.kubernetes().nodeLabels()).containsExactly(Map.entry("pool", "a"));
    assertThat(params.providerId()).isEqualTo("warmmetal://" + agent.machineId());
    assertThat(params.shape()).isEqualTo(SHAPE);

    fx.client.delete("/v1/instances/" + id, ApiFixture.ADMIN);
    Await.until(
        "terminated",
        () ->
            "terminated"
                .equals(
                    fx.client
                        .get("/v1/instances/" + id, ApiFixture.ADMIN)
                        .body()
                        .getString("state")));
    Await.until("reset, prepared, warm again", () -> "warm".equals(state(agent.machineId())));
    assertThat(seen.stream().map(c -> c.kind().wire()))
        .containsExactly("prepare", "join", "reset", "prepare");
    // Every step the agent ran is in the event log, timed by its timestamp (the log hands out
    // events once no older
    // transaction is open, and the steps are recorded as they are reported).
    Await.until(
        "the reset's step in the event log",
        () -> progressSteps(agent.machineId()).contains("kubeadm-reset"));
    assertThat(progressSteps(agent.machineId()))
        .startsWith(
            "container-runtime", "kubelet", "images", "disks", "kubeadm-join", "kubeadm-reset");
    agent.stop().await();
  }

  @Test
  void aStandbyLaunchLeavesItsMachinePreJoinedAndALaterLaunchTakesItWithoutASecondJoin()
      throws Exception {
    SimulatedAgent agent = agent(simulated());
    Await.until("standby", () -> "standby".equals(state(agent.machineId())));
    fx.client.put(
        "/v1/pools/" + SHAPE,
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 1).put("maxWarm", 1));
    Await.until("prepared and warm", () -> "warm".equals(state(agent.machineId())));
    JsonObject cluster =
        new JsonObject()
            .put("apiServer", "10.0.0.1:6443")
            .put("caCertHash", "sha256:" + "ab".repeat(32))
            .put("bootstrapToken", "abcdef.0123456789abcdef");

    var standby =
        fx.client.post(
            "/v1/instances",
            ApiFixture.ADMIN,
            new JsonObject()
                .put("shape", SHAPE)
                .put("standby", true)
                .put(
                    "kubernetes",
                    cluster
                        .copy()
                        .put(
                            "taints",
                            new JsonArray()
                                .add(
                                    new JsonObject()
                                        .put("key", "warmmetal.io/standby")
                                        .put("effect", "NoSchedule")))));
    assertThat(standby.status()).as(standby.raw()).isEqualTo(201);
    String standbyId = standby.body().getJsonArray("instances").getJsonObject(0).getString("id");
    Await.until("the standby instance runs", () -> "running".equals(instanceState(standbyId)));

    // Joined, and counted apart: not in use, not warm.
    assertThat(state(agent.machineId())).isEqualTo("pre-joined");
    JsonObject pool = fx.client.get("/v1/pools/" + SHAPE, ApiFixture.ADMIN).body();
    assertThat(pool.getInteger("preJoined")).isOne();
    assertThat(pool.getInteger("inUse")).isZero();
    assertThat(pool.getInteger("warm")).isZero();
    assertThat(
            fx.client
                .get("/v1/shapes/" + SHAPE, ApiFixture.ADMIN)
                .body()
                .getJsonObject("counts")
                .getInteger("pre-joined"))
        .isOne();
    Await.until(
        "the machine gauge counts it pre-joined",
        () ->
            fx.scrape()
                .contains("warmmetal_machines{shape=\"" + SHAPE + "\",state=\"pre-joined\"} 1.0"));
    assertThat(listedIds("/v1/instances?standby=true")).containsExactly(standbyId);
    assertThat(listedIds("/v1/instances?standby=false")).isEmpty();

    var taken =
        fx.client.post(
            "/v1/instances",
            ApiFixture.ADMIN,
            new JsonObject()
                .put("shape", SHAPE)
                .put("allowPreJoined", true)
                .put("kubernetes", cluster));
    assertThat(taken.status()).as(taken.raw()).isEqualTo(201);
    JsonObject instance = taken.body().getJsonArray("instances").getJsonObject(0);
    String id = instance.getString("id");
    assertThat(instance.getString("state")).isEqualTo("running");
    assertThat(instance.getBoolean("preJoined")).isTrue();
    assertThat(instance.getString("machineId")).isEqualTo(agent.machineId());
    assertThat(instance.getString("providerId")).isEqualTo("warmmetal://" + agent.machineId());
    assertThat(fx.client.get("/v1/instances/" + id, ApiFixture.ADMIN).body()).isEqualTo(instance);
    JsonObject ended = fx.client.get("/v1/instances/" + standbyId, ApiFixture.ADMIN).body();
    assertThat(ended.getString("state")).isEqualTo("terminated");
    assertThat(ended.getString("stateReason")).isEqualTo("handed over to instance " + id);
    assertThat(state(agent.machineId())).isEqualTo("in-use");
    assertThat(
            fx.count(
                "SELECT count(*) FROM commands WHERE machine_id = $1 AND type = 'join'",
                agent.machineId()))
        .isOne();

    // Terminated, it is reset and prepared as any machine; the agent never ran a second join.
    fx.client.delete("/v1/instances/" + id, ApiFixture.ADMIN);
    Await.until("reset, prepared, warm again", () -> "warm".equals(state(agent.machineId())));
    assertThat(seen.stream().map(c -> c.kind().wire()))
        .containsExactly("prepare", "join", "reset", "prepare");
    agent.stop().await();
  }

  private String instanceState(String id) {
    return fx.client.get("/v1/instances/" + id, ApiFixture.ADMIN).body().getString("state");
  }

  private List<String> listedIds(String path) {
    return fx.client.get(path, ApiFixture.ADMIN).body().getJsonArray("items").stream()
        .map(JsonObject.class::cast)
        .map(i -> i.getString("id"))
        .toList();
  }

  /** The steps the machine's commands reported, as the event log hands them out. */
  private List<String> progressSteps(String machineId) {
    return fx
        .client
        .get("/v1/events?limit=1000&machineId=" + machineId, ApiFixture.ADMIN)
        .body()
        .getJsonArray("items")
        .stream()
        .map(JsonObject.class::cast)
        .filter(e -> e.getString("type").equals("CommandProgress"))
        .map(e -> e.getString("reason"))
        .toList();
  }

  @Test
  void aCommandThatWasNeverAnnouncedIsDeliveredByTheSweep() throws Exception {
    SimulatedAgent agent = agent(simulated());
    Await.until("standby", () -> "standby".equals(state(agent.machineId())));
    // Queued behind the lifecycle's back, as if the replica that committed it died before
    // announcing it.
    fx.api
        .database()
        .preparedQuery(
            "INSERT INTO commands (id, machine_id, type, status) VALUES ($1, $2, 'reboot', "
                + "'queued')")
        .execute(Tuple.of("cmd-unannounced", agent.machineId()))
        .await();
    Await.until(
        "the heartbeat's catch-up delivers it",
        () -> seen.stream().anyMatch(c -> c.id().equals("cmd-unannounced")));
    agent.stop().await();
  }

  @Test
  void silenceMakesAMachineOfflineAndAReconnectBringsItBack() throws Exception {
    Path state = Files.createTempDirectory("warmmetal-sim");
    JsonObject machine =
        new JsonObject()
            .put("name", "sim-offline")
            .put("facts", ApiFixture.facts(16, 64))
            .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
    SimulatedAgent first =
        SimulatedAgent.start(vertx, enrollment, ws, agentPort, token, machine, state, simulated())
            .await();
    Await.until("standby", () -> "standby".equals(state(first.machineId())));
    first.stop().await();
    Await.until("offline after the silence", () -> "offline".equals(state(first.machineId())));

    // The same agent (same state directory, same identity) comes back.
    SimulatedAgent again =
        SimulatedAgent.start(vertx, enrollment, ws, agentPort, token, machine, state, simulated())
            .await();
    assertThat(again.machineId()).isEqualTo(first.machineId());
    Await.until("back to standby", () -> "standby".equals(state(first.machineId())));
    again.stop().await();
  }

  @Test
  void aQuarantinedMachineGoingSilentStaysFailedAndOthersStillGoOffline() throws Exception {
    Path state = Files.createTempDirectory("warmmetal-sim");
    JsonObject failing =
        new JsonObject()
            .put("name", "sim-failing")
            .put("facts", ApiFixture.facts(16, 64))
            .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
    Executor failsPrepare =
        (command, progress) ->
            Future.succeededFuture(
                command.kind() == CommandKind.PREPARE
                    ? Outcome.failed("this host has 1000 MiB of RAM")
                    : Outcome.ok("done"));
    SimulatedAgent quarantined =
        SimulatedAgent.start(vertx, enrollment, ws, agentPort, token, failing, state, failsPrepare)
            .await();
    fx.client.put(
        "/v1/pools/" + SHAPE,
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 1).put("maxWarm", 1));
    Await.until("failed", () -> "failed".equals(state(quarantined.machineId())));
    fx.client.delete("/v1/pools/" + SHAPE, ApiFixture.ADMIN);
    JsonObject other =
        new JsonObject()
            .put("name", "sim-other")
            .put("facts", ApiFixture.facts(16, 64))
            .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
    SimulatedAgent silent =
        SimulatedAgent.start(
                vertx,
                enrollment,
                ws,
                agentPort,
                token,
                other,
                Files.createTempDirectory("warmmetal-sim"),
                simulated())
            .await();
    Await.until("standby", () -> "standby".equals(state(silent.machineId())));
    quarantined.stop().await();
    silent.stop().await();
    // Both silent: the one in standby goes offline (the sweep is not stopped by the quarantined
    // one), which stays.
    Await.until("offline after the silence", () -> "offline".equals(state(silent.machineId())));
    assertThat(state(quarantined.machineId())).isEqualTo("failed");
  }

  @Test
  void anAgentThatNeverFinishesItsJoinFailsTheInstanceAndIsQuarantined() throws Exception {
    Executor hangsOnJoin =
        (command, progress) -> {
          seen.add(command);
          return command.kind() == CommandKind.JOIN
              ? Promise.<Outcome>promise().future()
              : Future.succeededFuture(Outcome.ok("done"));
        };
    SimulatedAgent agent = agent(hangsOnJoin);
    fx.client.put(
        "/v1/pools/" + SHAPE,
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 1).put("maxWarm", 1));
    Await.until("warm", () -> "warm".equals(state(agent.machineId())));
    String id =
        fx.client
            .post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", SHAPE))
            .body()
            .getJsonArray("instances")
            .getJsonObject(0)
            .getString("id");
    Await.until(
        "the join times out",
        () ->
            "failed"
                .equals(
                    fx.client
                        .get("/v1/instances/" + id, ApiFixture.ADMIN)
                        .body()
                        .getString("state")));
    assertThat(state(agent.machineId())).isEqualTo("failed");
    agent.stop().await();
  }

  /** A raw connection with an agent's identity, for speaking out of turn. */
  private WebSocket raw(AgentIdentity identity) {
    return ws.connect(
            new WebSocketConnectOptions()
                .setHost("127.0.0.1")
                .setPort(fx.api.agentPort())
                .setURI(Channel.PATH)
                .setSsl(true)
                .setSslOptions(
                    new ClientSSLOptions()
                        .setKeyCertOptions(
                            new PemKeyCertOptions()
                                .addKeyValue(Buffer.buffer(identity.keyPem()))
                                .addCertValue(Buffer.buffer(identity.certificatePem())))
                        .setTrustOptions(TrustOptions.wrap(new PinnedTrustManager(fx.api.caPin())))
                        .setHostnameVerificationAlgorithm("")))
        .await();
  }

  @Test
  void anAgentSpeaksForItsOwnMachineOnlyAndMalformedFramesCloseOnlyItsConnection()
      throws Exception {
    Executor idle =
        (command, progress) ->
            Promise.<Outcome>promise().future(); // takes commands, never finishes
    SimulatedAgent a = agent(idle);
    SimulatedAgent b = agent(idle);
    Await.until(
        "both standby",
        () -> "standby".equals(state(a.machineId())) && "standby".equals(state(b.machineId())));
    fx.client.put(
        "/v1/pools/" + SHAPE,
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 2).put("maxWarm", 2));
    Await.until(
        "both preparing",
        () -> "preparing".equals(state(a.machineId())) && "preparing".equals(state(b.machineId())));
    // Queued or already delivered (read once: it may be delivered between two reads).
    String bPrepare =
        fx.db()
            .preparedQuery("SELECT id FROM commands WHERE machine_id = $1 AND type = 'prepare'")
            .execute(Tuple.of(b.machineId()))
            .await()
            .iterator()
            .next()
            .getString("id");

    // A's certificate reporting B's command: refused, connection closed, B untouched. (A's own
    // agent is stopped
    // first: its reconnects would replace these connections, closing them as replaced.)
    a.stop().await();
    WebSocket rogue = raw(a.identity());
    Promise<Short> closed = Promise.promise();
    rogue.closeHandler(v -> closed.tryComplete(rogue.closeStatusCode()));
    rogue.writeTextMessage(
        new JsonObject().put("type", "hello").put("lastSeq", 1_000_000).encode());
    rogue.writeTextMessage(
        new JsonObject()
            .put("type", "result")
            .put("commandId", bPrepare)
            .put("status", "succeeded")
            .encode());
    assertThat(closed.future().await()).isEqualTo(Channel.CLOSE_PROTOCOL);
    assertThat(state(b.machineId())).isEqualTo("preparing");

    // A malformed frame closes that connection only; B's stays up.
    WebSocket garbled = raw(a.identity());
    Promise<Short> garbledClosed = Promise.promise();
    garbled.closeHandler(v -> garbledClosed.tryComplete(garbled.closeStatusCode()));
    garbled.writeTextMessage("{not json");
    assertThat(garbledClosed.future().await()).isEqualTo(Channel.CLOSE_PROTOCOL);
    assertThat(b.connected()).isTrue();
    b.stop().await();
  }

  @Test
  void noCertificateOrARetiredMachinesCertificateIsRefused() throws Exception {
    Throwable anonymous =
        Assertions.catchThrowable(
            () ->
                ws.connect(
                        new WebSocketConnectOptions()
                            .setHost("127.0.0.1")
                            .setPort(fx.api.agentPort())
                            .setURI(Channel.PATH)
                            .setSsl(true)
                            .setSslOptions(
                                new ClientSSLOptions()
                                    .setTrustOptions(
                                        TrustOptions.wrap(new PinnedTrustManager(fx.api.caPin())))
                                    .setHostnameVerificationAlgorithm("")))
                    .await());
    assertThat(anonymous).isInstanceOf(UpgradeRejectedException.class);
    assertThat(((UpgradeRejectedException) anonymous).getStatus()).isEqualTo(401);

    SimulatedAgent agent = agent(simulated());
    Await.until("standby", () -> "standby".equals(state(agent.machineId())));
    agent.stop().await();
    assertThat(
            fx.client
                .post("/v1/machines/" + agent.machineId() + "/retire", ApiFixture.ADMIN, null)
                .status())
        .isEqualTo(200);
    Throwable retired = Assertions.catchThrowable(() -> raw(agent.identity()));
    assertThat(retired).isInstanceOf(UpgradeRejectedException.class);
    assertThat(((UpgradeRejectedException) retired).getStatus()).isEqualTo(403);
  }
}
