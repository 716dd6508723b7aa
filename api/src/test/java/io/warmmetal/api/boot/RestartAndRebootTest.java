package io.warmmetal.api.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.enrollment.AgentIdentity;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.BootImageFixture;
import io.warmmetal.fleet.SimulatedAgent;
import io.warmmetal.protocol.testing.Await;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A network-booted server keeps nothing across a boot. When its hardware enrolls again it has
 * restarted: whatever it was prepared for is gone, so it starts over (enrolling → standby →
 * prepared by its pool) with the facts it reports now (the image it booted). A reboot the API
 * orders goes through {@code rebooting} and ends when the server enrolls again; a refused
 * enrollment of known hardware is said on its machine.
 */
@ExtendWith(VertxExtension.class)
class RestartAndRebootTest {
  private static final String OLD = "v1.20.2-aaaaaaaaaaaa";
  private static final String NEW = "v1.20.2-bbbbbbbbbbbb";

  private static JsonObject host(String uuid, String image) {
    return new JsonObject()
        .put("name", "srv-1")
        .put("address", "10.0.0.7")
        .put("facts", ApiFixture.facts(8, 32).put("image", new JsonObject().put("version", image)))
        .put(
            "identity",
            new JsonObject().put("systemUuid", uuid).put("primaryMac", "52:54:00:00:00:07"));
  }

  private static String reenrollToken(ApiFixture fx) {
    return fx.client
        .post(
            "/v1/enrollment-tokens",
            ApiFixture.ADMIN,
            new JsonObject().put("uses", 1).put("allowReenroll", true))
        .body()
        .getString("token");
  }

  private static String state(ApiFixture fx, String machine) {
    return fx.client.get("/v1/machines/" + machine, ApiFixture.ADMIN).body().getString("state");
  }

  private static List<JsonObject> commands(ApiFixture fx, String machine) {
    return fx
        .client
        .get("/v1/machines/" + machine + "/commands", ApiFixture.ADMIN)
        .body()
        .getJsonArray("items")
        .stream()
        .map(c -> (JsonObject) c)
        .toList();
  }

  @Test
  void aRestartedServerStartsOverARebootEndsWhenItEnrollsAgainAndRefusalsAreSaid(Vertx vertx)
      throws Exception {
    Path bootDir = Files.createTempDirectory("boot");
    BootImageFixture.install(bootDir, OLD, 1);
    BootImageFixture.install(bootDir, NEW, 2);
    try (ApiFixture fx =
        ApiFixture.start(
            vertx, Map.of("WARMMETAL_BOOT_DIR", bootDir.toString(), "WARMMETAL_BOOT_IMAGE", OLD))) {
      URI agentPort = URI.create("https://127.0.0.1:" + fx.api.agentPort());
      Enrollment enrollment = new Enrollment(vertx, agentPort, fx.api.caPin());
      WebSocketClient ws =
          vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
      String uuid = UUID.randomUUID().toString();
      AgentIdentity first = enrollment.enroll(reenrollToken(fx), host(uuid, OLD)).await();
      String machine = first.machineId();
      Path state = Files.createTempDirectory("agent");
      first.save(state);
      SimulatedAgent agent =
          SimulatedAgent.start(
                  vertx,
                  enrollment,
                  ws,
                  agentPort,
                  null,
                  host(uuid, OLD),
                  state,
                  new SimulatedExecutor(
                      vertx,
                      Map.of("prepare", Distribution.parse("fixed:10ms")),
                      0.0,
                      new Random(1)))
              .await();
      fx.client.put(
          "/v1/pools/x86-8c-32g",
          ApiFixture.ADMIN,
          new JsonObject().put("minWarm", 1).put("maxWarm", 1));
      fx.reconcilePools();
      Await.until("warm", () -> "warm".equals(state(fx, machine)));
      assertThat(
              fx.client
                  .get("/v1/machines/" + machine, ApiFixture.ADMIN)
                  .body()
                  .getJsonObject("labels")
                  .getString("warmmetal.io/image"))
          .isEqualTo(OLD);

      // A reboot: refused for a machine no agent could be told, ordered for this one.
      assertThat(
              fx.client
                  .post("/v1/machines/m-0000000000000000/reboot", ApiFixture.ADMIN, null)
                  .status())
          .isEqualTo(404);
      JsonObject rebooting =
          fx.client.post("/v1/machines/" + machine + "/reboot", ApiFixture.ADMIN, null).body();
      assertThat(rebooting.getString("state")).isEqualTo("rebooting");
      Await.until(
          "the agent ran the reboot",
          () ->
              commands(fx, machine).stream()
                  .anyMatch(
                      c ->
                          "reboot".equals(c.getString("type"))
                              && "succeeded".equals(c.getString("status"))));
      // Its old session still heard: it stays rebooting (it has not come back yet), and no pool
      // counts it.
      fx.reconcilePools();
      assertThat(state(fx, machine)).isEqualTo("rebooting");
      assertThat(
              fx.client.get("/v1/pools/x86-8c-32g", ApiFixture.ADMIN).body().getLong("rebooting"))
          .isEqualTo(1);
      agent.stop().await();

      // It boots the new image and enrolls again with a boot token (allowed: the API told it to
      // reboot): it starts
      // over, its facts and image label are what it reports now, and the pool prepares it again.
      String bootToken =
          fx.client
              .post(
                  "/v1/tokens",
                  ApiFixture.ADMIN,
                  new JsonObject().put("name", "pxe").put("role", "boot"))
              .body()
              .getString("token");
      var http = vertx.createHttpClient();
      String script =
          NetworkBootTest.get(
                  http,
                  fx.api.port(),
                  "/v1/boot/ipxe?mac=52:54:00:00:00:07",
                  NetworkBootTest.basic(bootToken))
              .body()
              .toString();
      http.close().await();
      String token = script.replaceAll("(?s).*warmmetal\\.token=(\\S+).*", "$1");
      AgentIdentity again = enrollment.enroll(token, host(uuid, NEW)).await();
      assertThat(again.machineId()).isEqualTo(machine);
      JsonObject now = fx.client.get("/v1/machines/" + machine, ApiFixture.ADMIN).body();
      assertThat(now.getString("state")).isEqualTo("enrolling");
      assertThat(now.getJsonObject("facts").getJsonObject("image").getString("version"))
          .isEqualTo(NEW);
      assertThat(now.getJsonObject("labels").getString("warmmetal.io/image")).isEqualTo(NEW);
      Path state2 = Files.createTempDirectory("agent");
      again.save(state2);
      SimulatedAgent back =
          SimulatedAgent.start(
                  vertx,
                  enrollment,
                  ws,
                  agentPort,
                  null,
                  host(uuid, NEW),
                  state2,
                  new SimulatedExecutor(
                      vertx,
                      Map.of("prepare", Distribution.parse("fixed:10ms")),
                      0.0,
                      new Random(2)))
              .await();
      fx.reconcilePools();
      Await.until("warm again", () -> "warm".equals(state(fx, machine)));

      // A warm server that restarts unasked (a power cut) and enrolls again is not counted warm: it
      // starts over,
      // and what was queued for its previous boot is cancelled.
      back.stop().await();
      enrollment.enroll(reenrollToken(fx), host(uuid, NEW)).await();
      assertThat(state(fx, machine)).isEqualTo("enrolling");

      // Enrollments refused for known hardware are said on its machine, at most once a minute;
      // unknown hardware
      // leaves nothing behind.
      assertThatThrownBy(() -> enrollment.enroll(token, host(uuid, NEW)).await())
          .hasMessageContaining("used up");
      assertThatThrownBy(() -> enrollment.enroll("wme_not-a-token", host(uuid, NEW)).await())
          .hasMessageContaining("unknown");
      assertThatThrownBy(
              () ->
                  enrollment
                      .enroll(
                          "wme_not-a-token",
                          host(UUID.randomUUID().toString(), NEW)
                              .put(
                                  "identity",
                                  new JsonObject().put("systemUuid", UUID.randomUUID().toString())))
                      .await())
          .hasMessageContaining("unknown");
      assertThat(fx.count("SELECT count(*) FROM events WHERE type = 'EnrollmentRefused'"))
          .isEqualTo(1);
      assertThat(
              fx.count(
                  "SELECT count(*) FROM events WHERE type = 'EnrollmentRefused' AND machine_id = $1"
                      + " AND reason LIKE '%used up%'",
                  machine))
          .isEqualTo(1);
      ws.close().await();
      enrollment.close().await();
    }
  }
}
