package io.warmmetal.api.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.api.boot.NetworkBootTest.Answer;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.BootImageFixture;
import io.warmmetal.fleet.SimulatedAgent;
import io.warmmetal.protocol.testing.Await;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * New hardware is admitted, not assumed. The red team's attack, replayed: with nothing but a boot
 * token (it sits in DHCP configuration and travels in clear), a made-up server with chosen facts
 * and the victim's zone label went standby → warm and received the next matching launch's join with
 * its kubeadm bootstrap token, and the token minted enrollment tokens as fast as it was asked. Now
 * the token's labels are bound to it (a URL cannot add the victim's zone), what it enrolls new
 * waits in {@code new} for an operator (never prepared, claimed or joined; rejected, it is retired
 * for good), a hardware record the operator registered lets a server straight through, and minting
 * is rate limited.
 */
@ExtendWith(VertxExtension.class)
class BootAdmissionTest {
  private static final String IMAGE = "v1.20.2-aaaaaaaaaaaa";
  private static final String SHAPE = "x86-16c-64g";
  private static final String ZONE = "topology.kubernetes.io/zone";

  private static JsonObject server(String name, String mac, String uuid) {
    return new JsonObject()
        .put("name", name)
        .put("address", "10.0.0.9")
        .put("facts", ApiFixture.facts(16, 64).put("image", new JsonObject().put("version", IMAGE)))
        .put("identity", new JsonObject().put("systemUuid", uuid).put("primaryMac", mac));
  }

  private static String enrollmentToken(Answer script) {
    assertThat(script.status()).as(script.body().toString()).isEqualTo(200);
    return script.body().toString().replaceAll("(?s).*warmmetal\\.token=(\\S+).*", "$1");
  }

  private static JsonObject machine(ApiFixture fx, String id) {
    return fx.client.get("/v1/machines/" + id, ApiFixture.ADMIN).body();
  }

  private static long joins(ApiFixture fx, String machineId) {
    return fx.count(
        "SELECT count(*) FROM commands WHERE machine_id = $1 AND type = 'join'", machineId);
  }

  private static long commands(ApiFixture fx, String machineId) {
    return fx.count("SELECT count(*) FROM commands WHERE machine_id = $1", machineId);
  }

  /**
   * A launch for the victim's zone, as its controller sends it: warm, preparing or standby machines
   * of the shape.
   */
  private static ApiClientResponse launch(ApiFixture fx, String zone) {
    var r =
        fx.client.post(
            "/v1/instances",
            fx.token("client"),
            new JsonObject()
                .put("shape", SHAPE)
                .put("allowStandby", true)
                .put("machineLabels", new JsonObject().put(ZONE, zone))
                .put(
                    "kubernetes",
                    new JsonObject()
                        .put("apiServer", "10.0.0.2:6443")
                        .put("caCertHash", "sha256:" + "ab".repeat(32))
                        .put("bootstrapToken", "abcdef.0123456789abcdef")));
    return new ApiClientResponse(r.status(), r.body());
  }

  private record ApiClientResponse(int status, JsonObject body) {}

  @Test
  void aBootTokensMadeUpServerWaitsAsNewHardwareAndNeverGetsAJoin(Vertx vertx) throws Exception {
    try (ApiFixture fx = withImage(vertx, "WARMMETAL_HEARTBEAT_SECONDS", "1")) {
      HttpClient http = vertx.createHttpClient();
      URI agentPort = URI.create("https://127.0.0.1:" + fx.api.agentPort());
      Enrollment enrollment = new Enrollment(vertx, agentPort, fx.api.caPin());
      WebSocketClient ws =
          vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
      SimulatedExecutor executor =
          new SimulatedExecutor(
              vertx,
              Map.of(
                  "prepare",
                  Distribution.parse("fixed:10ms"),
                  "join",
                  Distribution.parse("fixed:10ms")),
              0.0,
              new Random(1));
      List<SimulatedAgent> agents = new ArrayList<>();

      // The rack's boot token is bound to rack-a's label.
      var minted =
          fx.client.post(
              "/v1/tokens",
              ApiFixture.ADMIN,
              new JsonObject()
                  .put("name", "rack-a")
                  .put("role", "boot")
                  .put("machineLabels", new JsonObject().put(ZONE, "rack-a")));
      assertThat(minted.status()).isEqualTo(201);
      assertThat(minted.body().getJsonObject("machineLabels").getMap())
          .containsExactly(Map.entry(ZONE, "rack-a"));
      String bootToken = minted.body().getString("token");
      String basic = NetworkBootTest.basic(bootToken);

      // 1. The URL cannot add the victim's zone: 403 naming the label, no enrollment token minted.
      String fakeMac = "52:54:00:66:66:01";
      String fakeUuid = UUID.randomUUID().toString();
      Answer refused =
          NetworkBootTest.get(
              http,
              fx.api.port(),
              "/v1/boot/ipxe?mac="
                  + fakeMac
                  + "&uuid="
                  + fakeUuid
                  + "&labels="
                  + ZONE
                  + "%3Dvictim",
              basic);
      assertThat(refused.status()).isEqualTo(403);
      JsonObject error = new JsonObject(refused.body());
      assertThat(error.getString("code")).isEqualTo("Forbidden");
      assertThat(error.getString("field")).isEqualTo("labels");
      assertThat(error.getString("message"))
          .contains(ZONE + "=victim", "it allows " + ZONE + "=rack-a");
      assertThat(fx.count("SELECT count(*) FROM enrollment_tokens")).isZero();

      // 2. A made-up server with chosen facts enrolls with what the token allows: it carries
      // rack-a's label only,
      //    is not admitted, and once its agent connects it waits as new hardware.
      String token =
          enrollmentToken(
              NetworkBootTest.get(
                  http,
                  fx.api.port(),
                  "/v1/boot/ipxe?mac=" + fakeMac + "&uuid=" + fakeUuid,
                  basic));
      SimulatedAgent fake =
          SimulatedAgent.start(
                  vertx,
                  enrollment,
                  ws,
                  agentPort,
                  token,
                  server("made-up", fakeMac, fakeUuid),
                  Files.createTempDirectory("fake"),
                  executor)
              .await();
      agents.add(fake);
      String fakeId = fake.machineId();
      Await.until(
          "the made-up server waits as new hardware",
          () -> "new".equals(machine(fx, fakeId).getString("state")));
      JsonObject waiting = machine(fx, fakeId);
      assertThat(waiting.getBoolean("admitted")).isFalse();
      assertThat(waiting.getJsonObject("labels").getMap())
          .containsEntry(ZONE, "rack-a")
          .doesNotContainValue("victim");

      // The shape has a pool that wants a machine warm, and launches want that zone: no pool
      // prepares it, no
      // launch claims it — even one for its own zone — and no join is ever queued for it.
      assertThat(
              fx.client
                  .put(
                      "/v1/pools/" + SHAPE,
                      ApiFixture.ADMIN,
                      new JsonObject().put("minWarm", 1).put("maxWarm", 2))
                  .status())
          .isEqualTo(200);
      fx.reconcilePools();
      fx.reconcilePools();
      assertThat(machine(fx, fakeId).getString("state")).isEqualTo("new");
      assertThat(commands(fx, fakeId)).isZero();
      assertThat(launch(fx, "victim").status()).isEqualTo(503);
      assertThat(launch(fx, "rack-a").status()).isEqualTo(503);
      assertThat(joins(fx, fakeId)).isZero();
      assertThat(fx.client.get("/v1/pools/" + SHAPE, ApiFixture.ADMIN).body().getInteger("deficit"))
          .isEqualTo(1);
      assertThat(
              fx
                  .client
                  .get("/v1/machines?state=new", ApiFixture.ADMIN)
                  .body()
                  .getJsonArray("items")
                  .stream()
                  .map(m -> ((JsonObject) m).getString("id")))
          .containsExactly(fakeId);
      // Nor can it be rebooted into anything, or taken over by a second boot while its agent is
      // there.
      assertThat(
              fx.client.post("/v1/machines/" + fakeId + "/reboot", ApiFixture.ADMIN, null).status())
          .isEqualTo(409);
      String again =
          enrollmentToken(
              NetworkBootTest.get(http, fx.api.port(), "/v1/boot/ipxe?mac=" + fakeMac, basic));
      assertThatThrownBy(
              () -> enrollment.enroll(again, server("made-up", fakeMac, fakeUuid)).await())
          .hasMessageContaining("cannot re-enroll with a boot token now");

      // 3. The operator rejects it: retired, its agent shut out, still nothing queued. Its identity
      // is released (a
      //    real server with that MAC may come later): the same made-up server booting again is new
      // hardware again.
      assertThat(
              fx.client
                  .post("/v1/machines/" + fakeId + "/accept", fx.token("fleet-reader"), null)
                  .status())
          .isEqualTo(403);
      JsonObject rejected =
          fx.client.post("/v1/machines/" + fakeId + "/reject", ApiFixture.ADMIN, null).body();
      assertThat(rejected.getString("state")).isEqualTo("retired");
      assertThat(rejected.getBoolean("admitted")).isFalse();
      assertThat(rejected.getJsonObject("identity").isEmpty()).isTrue();
      assertThat(
              fx.client.post("/v1/machines/" + fakeId + "/reject", ApiFixture.ADMIN, null).status())
          .isEqualTo(200);
      assertThat(
              fx.client.post("/v1/machines/" + fakeId + "/accept", ApiFixture.ADMIN, null).status())
          .isEqualTo(409);
      Await.until("the rejected agent's channel closed", () -> !fake.connected());
      fx.reconcilePools();
      assertThat(launch(fx, "rack-a").status()).isEqualTo(503);
      assertThat(commands(fx, fakeId)).isZero();
      SimulatedAgent returned =
          SimulatedAgent.start(
                  vertx,
                  enrollment,
                  ws,
                  agentPort,
                  enrollmentToken(
                      NetworkBootTest.get(
                          http, fx.api.port(), "/v1/boot/ipxe?mac=" + fakeMac, basic)),
                  server("made-up", fakeMac, fakeUuid),
                  Files.createTempDirectory("returned"),
                  executor)
              .await();
      agents.add(returned);
      assertThat(returned.machineId()).isNotEqualTo(fakeId);
      Await.until(
          "the made-up server, back, waits again",
          () -> "new".equals(machine(fx, returned.machineId()).getString("state")));
      fx.reconcilePools();
      assertThat(commands(fx, returned.machineId())).isZero();
      assertThat(launch(fx, "rack-a").status()).isEqualTo(503);

      // 4. A server the operator registered beforehand goes straight through: admitted, the
      // record's labels over
      //    the token's, standby → prepared → warm, and a launch for its zone joins it. Every
      // identity a record holds
      //    must match: its MAC with another UUID is new hardware like any other.
      String realMac = "52:54:00:77:77:01";
      String realUuid = UUID.randomUUID().toString();
      var record =
          fx.client.put(
              "/v1/hardware/" + realMac.toUpperCase().replace(':', '-'),
              ApiFixture.ADMIN,
              new JsonObject()
                  .put("systemUuid", realUuid)
                  .put("labels", new JsonObject().put("rack-unit", "u12")));
      assertThat(record.status()).isEqualTo(200);
      assertThat(record.body().getString("id")).isEqualTo(realMac);
      SimulatedAgent impostor =
          SimulatedAgent.start(
                  vertx,
                  enrollment,
                  ws,
                  agentPort,
                  enrollmentToken(
                      NetworkBootTest.get(
                          http, fx.api.port(), "/v1/boot/ipxe?mac=" + realMac, basic)),
                  server("impostor", realMac, UUID.randomUUID().toString()),
                  Files.createTempDirectory("impostor"),
                  executor)
              .await();
      agents.add(impostor);
      Await.until(
          "the impostor waits",
          () -> "new".equals(machine(fx, impostor.machineId()).getString("state")));
      assertThat(
              fx.client
                  .get("/v1/hardware/" + realMac, ApiFixture.ADMIN)
                  .body()
                  .getString("machineId"))
          .isNull();
      fx.client.post("/v1/machines/" + impostor.machineId() + "/reject", ApiFixture.ADMIN, null);

      SimulatedAgent real =
          SimulatedAgent.start(
                  vertx,
                  enrollment,
                  ws,
                  agentPort,
                  enrollmentToken(
                      NetworkBootTest.get(
                          http,
                          fx.api.port(),
                          "/v1/boot/ipxe?mac=" + realMac + "&uuid=" + realUuid,
                          basic)),
                  server("real", realMac, realUuid),
                  Files.createTempDirectory("real"),
                  executor)
              .await();
      agents.add(real);
      String realId = real.machineId();
      Await.until(
          "the registered server standby or on",
          () ->
              Set.of("standby", "preparing", "warm")
                  .contains(machine(fx, realId).getString("state")));
      JsonObject admitted = machine(fx, realId);
      assertThat(admitted.getBoolean("admitted")).isTrue();
      assertThat(admitted.getJsonObject("labels").getMap())
          .containsEntry(ZONE, "rack-a")
          .containsEntry("rack-unit", "u12");
      // Found by either identity; it says which machine enrolled as it.
      assertThat(
              fx.client
                  .get("/v1/hardware/" + realUuid.toUpperCase(), ApiFixture.ADMIN)
                  .body()
                  .getString("machineId"))
          .isEqualTo(realId);
      fx.reconcilePools();
      Await.until(
          "the registered server warm",
          () -> "warm".equals(machine(fx, realId).getString("state")));
      var launched = launch(fx, "rack-a");
      assertThat(launched.status()).isEqualTo(201);
      assertThat(launched.body().getJsonArray("instances").getJsonObject(0).getString("machineId"))
          .isEqualTo(realId);
      assertThat(joins(fx, realId)).isEqualTo(1);
      assertThat(joins(fx, returned.machineId())).isZero();

      // Records: one per identity, listed, named by a UUID alone too, deleted.
      String spareUuid = UUID.randomUUID().toString();
      assertThat(fx.client.put("/v1/hardware/" + spareUuid, ApiFixture.ADMIN, null).status())
          .isEqualTo(200);
      assertThat(
              fx.client
                  .put(
                      "/v1/hardware/52:54:00:77:77:09",
                      ApiFixture.ADMIN,
                      new JsonObject().put("systemUuid", spareUuid))
                  .status())
          .isEqualTo(409);
      assertThat(
              fx.client
                  .put(
                      "/v1/hardware/52:54:00:77:77:09",
                      ApiFixture.ADMIN,
                      new JsonObject().put("primaryMac", realMac))
                  .status())
          .isEqualTo(400);
      assertThat(fx.client.get("/v1/hardware", ApiFixture.ADMIN).body().getJsonArray("items"))
          .hasSize(2);
      assertThat(fx.client.delete("/v1/hardware/" + spareUuid, ApiFixture.ADMIN).status())
          .isEqualTo(204);
      assertThat(fx.client.get("/v1/hardware/" + spareUuid, ApiFixture.ADMIN).status())
          .isEqualTo(404);
      assertThat(
              fx.client.put("/v1/hardware/" + spareUuid, fx.token("fleet-reader"), null).status())
          .isEqualTo(403);

      // 5. The operator accepts the waiting one (it has looked at its facts): standby, prepared by
      // its pool, warm.
      JsonObject accepted =
          fx.client
              .post("/v1/machines/" + returned.machineId() + "/accept", ApiFixture.ADMIN, null)
              .body();
      assertThat(accepted.getString("state")).isEqualTo("standby");
      assertThat(accepted.getBoolean("admitted")).isTrue();
      fx.reconcilePools();
      Await.until(
          "the accepted server warm",
          () -> "warm".equals(machine(fx, returned.machineId()).getString("state")));
      assertThat(
              fx.count(
                  "SELECT count(*) FROM events WHERE machine_id = $1 AND type = 'MachineAccepted'",
                  returned.machineId()))
          .isEqualTo(1);

      // 6. It reboots: known hardware enrolls again with a boot token and needs no new acceptance.
      String otherId = returned.machineId();
      assertThat(
              fx.client
                  .post("/v1/machines/" + otherId + "/reboot", ApiFixture.ADMIN, null)
                  .status())
          .isEqualTo(200);
      Await.until(
          "the agent ran the reboot",
          () ->
              fx.count(
                      "SELECT count(*) FROM commands WHERE machine_id = $1"
                          + " AND type = 'reboot' AND status = 'succeeded'",
                      otherId)
                  == 1);
      returned.stop().await();
      SimulatedAgent rebooted =
          SimulatedAgent.start(
                  vertx,
                  enrollment,
                  ws,
                  agentPort,
                  enrollmentToken(
                      NetworkBootTest.get(
                          http, fx.api.port(), "/v1/boot/ipxe?mac=" + fakeMac, basic)),
                  server("made-up", fakeMac, fakeUuid),
                  Files.createTempDirectory("rebooted"),
                  executor)
              .await();
      agents.add(rebooted);
      assertThat(rebooted.machineId()).isEqualTo(otherId);
      Await.until(
          "back in standby, no acceptance asked",
          () ->
              Set.of("standby", "preparing", "warm")
                  .contains(machine(fx, otherId).getString("state")));
      assertThat(machine(fx, otherId).getBoolean("admitted")).isTrue();

      // 7. An operator's own enrollment token vouches for what it enrolls, new hardware waiting
      // included.
      String spareMac = "52:54:00:66:66:09";
      var waitingOne =
          enrollment
              .enroll(
                  enrollmentToken(
                      NetworkBootTest.get(
                          http, fx.api.port(), "/v1/boot/ipxe?mac=" + spareMac, basic)),
                  server("spare", spareMac, UUID.randomUUID().toString()))
              .await();
      assertThat(machine(fx, waitingOne.machineId()).getBoolean("admitted")).isFalse();
      String operatorToken =
          fx.client
              .post(
                  "/v1/enrollment-tokens",
                  ApiFixture.ADMIN,
                  new JsonObject().put("allowReenroll", true))
              .body()
              .getString("token");
      var vouched =
          enrollment
              .enroll(operatorToken, server("spare", spareMac, UUID.randomUUID().toString()))
              .await();
      assertThat(vouched.machineId()).isEqualTo(waitingOne.machineId());
      assertThat(machine(fx, vouched.machineId()).getBoolean("admitted")).isTrue();
      assertThat(
              fx.count(
                  "SELECT count(*) FROM events WHERE machine_id = $1 AND type = 'MachineAccepted'"
                      + " AND reason = 'enrolled with an operator''s token'",
                  vouched.machineId()))
          .isEqualTo(1);

      for (SimulatedAgent a : agents) {
        a.stop().await();
      }
      ws.close().await();
      enrollment.close().await();
      http.close().await();
    }
  }

  @Test
  void aBootTokenMintsAtABoundedRateAndOneOutstandingTokenPerHardware(Vertx vertx)
      throws Exception {
    try (ApiFixture fx =
        withImage(
            vertx, "WARMMETAL_BOOT_MINT_BURST", "10", "WARMMETAL_BOOT_MINTS_PER_MINUTE", "6")) {
      HttpClient http =
          vertx.createHttpClient(new HttpClientOptions(), new PoolOptions().setHttp1MaxSize(50));
      String basic = NetworkBootTest.basic(fx.token("boot"));

      // 50 boots at once, each for another made-up server: the burst is minted, the rest refused
      // with 429.
      List<Future<Answer>> burst = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        burst.add(
            send(
                http,
                fx.api.port(),
                String.format("/v1/boot/ipxe?mac=52:54:00:55:00:%02x", i),
                basic));
      }
      Map<Integer, Integer> statuses = new HashMap<>();
      List<Answer> tooMany = new ArrayList<>();
      for (Future<Answer> f : burst) {
        Answer a = f.await();
        statuses.merge(a.status(), 1, Integer::sum);
        if (a.status() == 429) {
          tooMany.add(a);
        }
      }
      assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(200, 10, 429, 40));
      assertThat(fx.count("SELECT count(*) FROM enrollment_tokens")).isEqualTo(10);
      JsonObject error = new JsonObject(tooMany.get(0).body());
      assertThat(error.getString("code")).isEqualTo("TooManyRequests");
      assertThat(error.getString("message")).contains("WARMMETAL_BOOT_MINT_BURST");
      // 6 a minute: one more fits in ten seconds at most.
      assertThat(tooMany)
          .allSatisfy(a -> assertThat(Integer.parseInt(a.retryAfter())).isBetween(1, 10));

      // Another token has its own bucket; for one server, only its latest token is outstanding.
      String second = NetworkBootTest.basic(fx.token("boot"));
      String mac = "52:54:00:55:01:01";
      String uuid = UUID.randomUUID().toString();
      List<String> tokens = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        tokens.add(
            enrollmentToken(send(http, fx.api.port(), "/v1/boot/ipxe?mac=" + mac, second).await()));
      }
      tokens.add(
          enrollmentToken(
              send(http, fx.api.port(), "/v1/boot/ipxe?mac=52:54:00:55:01:02&uuid=" + uuid, second)
                  .await()));
      assertThat(
              fx.count(
                  "SELECT count(*) FROM enrollment_tokens WHERE revoked_at IS NULL AND (boot_mac = $1"
                      + " OR boot_uuid = $2)",
                  mac,
                  uuid))
          .isEqualTo(2);
      Enrollment enrollment =
          new Enrollment(
              vertx, URI.create("https://127.0.0.1:" + fx.api.agentPort()), fx.api.caPin());
      assertThatThrownBy(() -> enrollment.enroll(tokens.get(0), server("x", mac, uuid)).await())
          .hasMessageContaining("unknown or revoked");
      // Same UUID, another MAC: that replaced nothing of this MAC's; its own token is the last one.
      enrollment.enroll(tokens.get(2), server("x", mac, UUID.randomUUID().toString())).await();

      // Revoking a boot token revokes what it minted and nobody used.
      String thirdToken = fx.token("boot");
      String unused =
          enrollmentToken(
              send(
                      http,
                      fx.api.port(),
                      "/v1/boot/ipxe?mac=52:54:00:55:02:01",
                      NetworkBootTest.basic(thirdToken))
                  .await());
      String thirdId =
          fx.client.get("/v1/tokens", ApiFixture.ADMIN).body().getJsonArray("items").stream()
              .map(t -> (JsonObject) t)
              .filter(t -> t.getString("role").equals("boot"))
              .reduce((a, b) -> b)
              .orElseThrow()
              .getString("id");
      assertThat(fx.client.delete("/v1/tokens/" + thirdId, ApiFixture.ADMIN).status())
          .isEqualTo(204);
      assertThatThrownBy(
              () ->
                  enrollment
                      .enroll(
                          unused, server("y", "52:54:00:55:02:01", UUID.randomUUID().toString()))
                      .await())
          .hasMessageContaining("unknown or revoked");
      enrollment.close().await();
      http.close().await();
    }
  }

  @Test
  void theBootEndpointsAreServedOverHttpsWithTheCasCertificateToTls12Clients(Vertx vertx)
      throws Exception {
    try (ApiFixture fx = withImage(vertx, "WARMMETAL_BOOT_HTTPS_PORT", "0")) {
      int port = fx.api.bootHttpsPort();
      assertThat(port).isPositive();
      // As an iPXE built with TRUST=<the API's CA> connects: the CA alone trusted, the name checked
      // (127.0.0.1 is one
      // of WARMMETAL_AGENT_NAMES), TLS 1.2 (iPXE's newest).
      HttpClient https =
          vertx.createHttpClient(
              new HttpClientOptions()
                  .setSsl(true)
                  .setVerifyHost(true)
                  .setEnabledSecureTransportProtocols(Set.of("TLSv1.2"))
                  .setTrustOptions(
                      new PemTrustOptions()
                          .addCertPath(fx.dataDir.resolve("ca").resolve("ca.crt").toString())));
      String basic = NetworkBootTest.basic(fx.token("boot"));
      Answer script =
          NetworkBootTest.request(
                  https, "127.0.0.1", port, "/v1/boot/ipxe?mac=52:54:00:44:00:01", basic)
              .await();
      assertThat(script.status()).as(script.body().toString()).isEqualTo(200);
      String text = script.body().toString();
      // Kernel and initrd over HTTPS from where the script came; layers (digest-checked) over HTTP,
      // API port.
      assertThat(text)
          .contains("kernel https://127.0.0.1:" + port + "/v1/boot/images/" + IMAGE + "/vmlinuz ")
          .contains("initrd https://127.0.0.1:" + port + "/v1/boot/images/" + IMAGE + "/initrd.img")
          .contains(
              "warmmetal.files=http://127.0.0.1:"
                  + fx.api.port()
                  + "/v1/boot/images/"
                  + IMAGE
                  + "/ ");
      assertThat(
              NetworkBootTest.request(
                      https, "127.0.0.1", port, "/v1/boot/images/" + IMAGE + "/vmlinuz", null)
                  .await()
                  .status())
          .isEqualTo(200);
      // Only the boot endpoints: the rest of the API (and the console, metrics) stays on its own
      // port.
      Answer other =
          NetworkBootTest.request(
                  https, "127.0.0.1", port, "/v1/machines", "Bearer " + ApiFixture.ADMIN)
              .await();
      assertThat(other.status()).isEqualTo(404);
      assertThat(
              NetworkBootTest.request(https, "127.0.0.1", port, "/metrics", null).await().status())
          .isEqualTo(404);
      https.close().await();
    }
  }

  private static Future<Answer> send(HttpClient http, int port, String path, String authorization) {
    return NetworkBootTest.request(http, "127.0.0.1", port, path, authorization);
  }

  /** The API with one node image installed, and these settings. */
  private static ApiFixture withImage(Vertx vertx, String... settings) throws Exception {
    Path bootDir = Files.createTempDirectory("boot");
    BootImageFixture.install(bootDir, IMAGE, 1);
    Map<String, String> env = new HashMap<>(Map.of("WARMMETAL_BOOT_DIR", bootDir.toString()));
    for (int i = 0; i < settings.length; i += 2) {
      env.put(settings[i], settings[i + 1]);
    }
    return ApiFixture.start(vertx, env);
  }
}
