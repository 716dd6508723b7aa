package io.warmmetal.api.instances;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Terminations and the command results that carry machines around the lifecycle and back to warm.
 */
@ExtendWith(VertxExtension.class)
class TerminateTest {
  private ApiFixture fx;
  private String client;
  private String machine;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
    client = fx.token("client");
    machine = fx.registerMachines(1, ApiFixture.facts(8, 32), true).get(0);
  }

  @AfterEach
  void stop() {
    fx.close();
  }

  private String launch() {
    Response r =
        fx.client.post("/v1/instances", client, new JsonObject().put("shape", "x86-8c-32g"));
    assertThat(r.status()).isEqualTo(201);
    return r.body().getJsonArray("instances").getJsonObject(0).getString("id");
  }

  private String machineState() {
    return fx.client.get("/v1/machines/" + machine, ApiFixture.ADMIN).body().getString("state");
  }

  private JsonObject instance(String id) {
    return fx.client.get("/v1/instances/" + id, client).body();
  }

  @Test
  void fullCycleBackToWarmAndTerminatingTwiceIsHarmless() {
    String id = launch();
    fx.report(fx.openCommands(machine, "join").get(0), true);
    assertThat(instance(id).getString("state")).isEqualTo("running");
    assertThat(machineState()).isEqualTo("in-use");

    Response first = fx.client.delete("/v1/instances/" + id, client);
    Response second = fx.client.delete("/v1/instances/" + id, client);
    assertThat(first.status()).isEqualTo(200);
    assertThat(first.body().getString("state")).isEqualTo("shutting-down");
    assertThat(second.status()).isEqualTo(200);
    assertThat(second.body().getString("state")).isEqualTo("shutting-down");
    assertThat(machineState()).isEqualTo("resetting");
    assertThat(fx.openCommands(machine, "reset")).hasSize(1); // the second call queued nothing

    fx.report(fx.openCommands(machine, "reset").get(0), true);
    JsonObject terminated = instance(id);
    assertThat(terminated.getString("state")).isEqualTo("terminated");
    assertThat(terminated.getString("terminatedAt")).isNotNull();
    assertThat(machineState()).isEqualTo("preparing");

    fx.report(fx.openCommands(machine, "prepare").get(0), true);
    assertThat(machineState()).isEqualTo("warm");
    assertThat(fx.client.delete("/v1/instances/" + id, client).body().getString("state"))
        .isEqualTo("terminated");
    // Warm again: it can be launched on.
    launch();
  }

  @Test
  void terminatingAPendingInstanceCancelsItsJoin() {
    String id = launch();
    String join = fx.openCommands(machine, "join").get(0);
    fx.client.delete("/v1/instances/" + id, client);
    assertThat(fx.openCommands(machine, "join")).isEmpty();
    // A late result for the cancelled join is refused and changes nothing.
    Response late =
        fx.client.post(
            "/v1/commands/" + join + "/result",
            ApiFixture.ADMIN,
            new JsonObject().put("status", "succeeded"));
    assertThat(late.status()).isEqualTo(409);
    assertThat(instance(id).getString("state")).isEqualTo("shutting-down");
  }

  @Test
  void aFailedJoinFailsTheInstanceAndQuarantinesTheMachine() {
    String id = launch();
    fx.client.post(
        "/v1/commands/" + fx.openCommands(machine, "join").get(0) + "/result",
        ApiFixture.ADMIN,
        new JsonObject()
            .put("status", "failed")
            .put("message", "kubeadm join: connection refused"));
    JsonObject failed = instance(id);
    assertThat(failed.getString("state")).isEqualTo("failed");
    assertThat(failed.getString("stateReason")).contains("connection refused");
    assertThat(machineState()).isEqualTo("failed");

    // Terminating a failed instance ends it; the machine stays quarantined for an operator, who may
    // retire it.
    assertThat(fx.client.delete("/v1/instances/" + id, client).body().getString("state"))
        .isEqualTo("terminated");
    assertThat(machineState()).isEqualTo("failed");
    assertThat(
            fx.client
                .post("/v1/machines/" + machine + "/retire", ApiFixture.ADMIN, null)
                .body()
                .getString("state"))
        .isEqualTo("retired");
  }

  @Test
  void reportingTheSameResultTwiceIsANoOpAndAContradictionIsAConflict() {
    launch();
    String join = fx.openCommands(machine, "join").get(0);
    fx.report(join, true);
    long events = fx.count("SELECT count(*) FROM events");
    fx.report(join, true);
    assertThat(fx.count("SELECT count(*) FROM events")).isEqualTo(events);
    Response contradiction =
        fx.client.post(
            "/v1/commands/" + join + "/result",
            ApiFixture.ADMIN,
            new JsonObject().put("status", "failed"));
    assertThat(contradiction.status()).isEqualTo(409);
    assertThat(contradiction.errorCode()).isEqualTo("Conflict");
  }

  @Test
  void aResultCannotOvertakeAnEarlierOpenCommand() {
    // A launch that accepts preparing machines queues its join behind the machine's prepare.
    String standby = fx.registerMachines(1, ApiFixture.facts(4, 16), false).get(0);
    fx.client.put(
        "/v1/pools/x86-4c-16g",
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 1).put("maxWarm", 1));
    fx.reconcilePools();
    fx.client.post(
        "/v1/instances",
        client,
        new JsonObject().put("shape", "x86-4c-16g").put("allowPreparing", true));
    String join = fx.openCommands(standby, "join").get(0);
    Response early =
        fx.client.post(
            "/v1/commands/" + join + "/result",
            ApiFixture.ADMIN,
            new JsonObject().put("status", "succeeded"));
    assertThat(early.status()).isEqualTo(409);
    assertThat(early.errorCode()).isEqualTo("InvalidState");
    assertThat(fx.openCommands(standby, "join")).containsExactly(join);
  }

  @Test
  void terminatingWhilePreparingCancelsThePrepareSoALateResultCannotMakeItWarm() {
    String standby = fx.registerMachines(1, ApiFixture.facts(4, 16), false).get(0);
    fx.client.put(
        "/v1/pools/x86-4c-16g",
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 1).put("maxWarm", 1));
    fx.reconcilePools();
    String oldPrepare = fx.openCommands(standby, "prepare").get(0);
    String id =
        fx.client
            .post(
                "/v1/instances",
                client,
                new JsonObject().put("shape", "x86-4c-16g").put("allowPreparing", true))
            .body()
            .getJsonArray("instances")
            .getJsonObject(0)
            .getString("id");
    fx.client.delete("/v1/instances/" + id, client);
    fx.report(fx.openCommands(standby, "reset").get(0), true);
    assertThat(fx.client.get("/v1/machines/" + standby, ApiFixture.ADMIN).body().getString("state"))
        .isEqualTo("preparing");

    Response late =
        fx.client.post(
            "/v1/commands/" + oldPrepare + "/result",
            ApiFixture.ADMIN,
            new JsonObject().put("status", "succeeded"));
    assertThat(late.status()).isEqualTo(409);
    assertThat(fx.client.get("/v1/machines/" + standby, ApiFixture.ADMIN).body().getString("state"))
        .isEqualTo("preparing");
    fx.report(fx.openCommands(standby, "prepare").get(0), true);
    assertThat(fx.client.get("/v1/machines/" + standby, ApiFixture.ADMIN).body().getString("state"))
        .isEqualTo("warm");
  }

  @Test
  void unknownInstancesAndCommandsAre404() {
    assertThat(fx.client.delete("/v1/instances/i-0123456789abcdef0", client).status())
        .isEqualTo(404);
    assertThat(fx.client.get("/v1/instances/i-0123456789abcdef0", client).errorCode())
        .isEqualTo("NotFound");
    assertThat(
            fx.client
                .post(
                    "/v1/commands/cmd-0123456789abcdef/result",
                    ApiFixture.ADMIN,
                    new JsonObject().put("status", "succeeded"))
                .status())
        .isEqualTo(404);
  }

  @Test
  void retiringAMachineWithAnInstanceIsRefused() {
    launch();
    Response r = fx.client.post("/v1/machines/" + machine + "/retire", ApiFixture.ADMIN, null);
    assertThat(r.status()).isEqualTo(409);
    assertThat(r.errorCode()).isEqualTo("InvalidState");
    assertThat(machineState()).isEqualTo("joining");
  }

  @Test
  void secretsAreSealedAndNeverReturned() {
    String token = "abcdef.0123456789abcdef";
    String userData =
        Base64.getEncoder().encodeToString("#!/bin/sh\necho s3cr3t-user-data".getBytes());
    String other = fx.registerMachines(1, ApiFixture.facts(8, 32), true).get(0);
    Response joining =
        fx.client.post(
            "/v1/instances",
            client,
            new JsonObject()
                .put("shape", "x86-8c-32g")
                .put(
                    "kubernetes",
                    new JsonObject()
                        .put("apiServer", "10.0.0.1:6443")
                        .put("caCertHash", "sha256:" + "ab".repeat(32))
                        .put("bootstrapToken", token)));
    Response scripted =
        fx.client.post(
            "/v1/instances",
            client,
            new JsonObject().put("shape", "x86-8c-32g").put("userData", userData));
    assertThat(scripted.body().getJsonArray("instances").getJsonObject(0).getBoolean("hasUserData"))
        .isTrue();
    assertThat(
            joining
                .body()
                .getJsonArray("instances")
                .getJsonObject(0)
                .getJsonObject("kubernetes")
                .getString("apiServer"))
        .isEqualTo("10.0.0.1:6443");
    for (Response r : List.of(joining, scripted)) {
      String id = r.body().getJsonArray("instances").getJsonObject(0).getString("id");
      assertThat(r.raw()).doesNotContain(token).doesNotContain("s3cr3t").doesNotContain(userData);
      assertThat(fx.client.get("/v1/instances/" + id, client).raw())
          .doesNotContain(token)
          .doesNotContain(userData);
      // At rest: sealed bytes, not the plaintext.
      var sealed =
          fx.db()
              .preparedQuery("SELECT secrets FROM instances WHERE id = $1")
              .execute(Tuple.of(id))
              .await()
              .iterator()
              .next()
              .getBuffer(0);
      assertThat(sealed).isNotNull();
      assertThat(sealed.toString()).doesNotContain(token).doesNotContain("s3cr3t");
    }
    assertThat(fx.client.get("/v1/instances", client).raw())
        .doesNotContain(token)
        .doesNotContain(userData);
    assertThat(fx.client.get("/v1/events", ApiFixture.ADMIN).raw()).doesNotContain(token);

    // Dropped once the instances leave pending.
    fx.report(fx.openCommands(machine, "join").get(0), true);
    fx.report(fx.openCommands(other, "join").get(0), true);
    assertThat(fx.count("SELECT count(*) FROM instances WHERE secrets IS NOT NULL")).isZero();
  }
}
