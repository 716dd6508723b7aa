package io.warmmetal.api.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Bearer tokens and roles: admin does everything; client launches, terminates, reads; read-only
 * reads.
 */
@ExtendWith(VertxExtension.class)
class RolesTest {
  private static ApiFixture fx;
  private static String client;
  private static String reader;

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
    client = fx.token("client");
    reader = fx.token("read-only");
    fx.registerMachines(2, ApiFixture.facts(8, 32), true);
  }

  @AfterAll
  static void stop() {
    fx.close();
  }

  private static final JsonObject LAUNCH = new JsonObject().put("shape", "x86-8c-32g");
  private static final JsonObject MACHINE =
      new JsonObject().put("name", "n").put("facts", ApiFixture.facts(1, 1));

  @Test
  void missingOrUnknownTokensAre401BeforeAnyValidation() {
    Response none = fx.client.post("/v1/instances", null, new JsonObject().put("garbage", true));
    assertThat(none.status()).isEqualTo(401);
    assertThat(none.errorCode()).isEqualTo("Unauthorized");
    assertThat(none.headers().get("WWW-Authenticate")).startsWith("Bearer");
    assertThat(fx.client.get("/v1/machines", "wm_not-a-real-token").status()).isEqualTo(401);
  }

  @Test
  void readOnlyReadsItsProjectButChangesNothing() {
    assertThat(fx.client.get("/v1/instances", reader).status()).isEqualTo(200);
    assertThat(fx.client.get("/v1/shapes", reader).status()).isEqualTo(200);
    Response machines = fx.client.get("/v1/machines", reader); // the fleet is the operator's
    assertThat(machines.status()).isEqualTo(403);
    assertThat(machines.body().getString("message")).contains("fleet-read");
    assertThat(fx.client.get("/v1/events", reader).status()).isEqualTo(200);
    Response launch = fx.client.post("/v1/instances", reader, LAUNCH);
    assertThat(launch.status()).isEqualTo(403);
    assertThat(launch.errorCode()).isEqualTo("Forbidden");
    assertThat(launch.body().getString("message")).contains("launch");
    assertThat(fx.client.delete("/v1/instances/i-0123456789abcdef0", reader).status())
        .isEqualTo(403);
    assertThat(fx.count("SELECT count(*) FROM instances")).isZero();
  }

  @Test
  void clientLaunchesAndTerminatesButDoesNotAdminister() {
    Response launch = fx.client.post("/v1/instances", client, LAUNCH);
    assertThat(launch.status()).isEqualTo(201);
    String id = launch.body().getJsonArray("instances").getJsonObject(0).getString("id");
    assertThat(fx.client.delete("/v1/instances/" + id, client).status()).isEqualTo(200);
    assertThat(fx.client.post("/v1/machines", client, MACHINE).status()).isEqualTo(403);
    assertThat(
            fx.client
                .put(
                    "/v1/pools/x86-8c-32g",
                    client,
                    new JsonObject().put("minWarm", 1).put("maxWarm", 1))
                .status())
        .isEqualTo(403);
    assertThat(fx.client.get("/v1/tokens", client).status()).isEqualTo(403);
  }

  @Test
  void tokensAreShownOnceStoredHashedAndRevocable() {
    Response created =
        fx.client.post(
            "/v1/tokens",
            ApiFixture.ADMIN,
            new JsonObject().put("name", "ci").put("role", "read-only"));
    assertThat(created.status()).isEqualTo(201);
    String secret = created.body().getString("token");
    String id = created.body().getString("id");
    assertThat(fx.client.get("/v1/instances", secret).status()).isEqualTo(200);

    Response listed = fx.client.get("/v1/tokens", ApiFixture.ADMIN);
    assertThat(listed.raw()).contains(id).doesNotContain(secret);
    assertThat(
            fx.count(
                "SELECT count(*) FROM api_tokens WHERE position(convert_to($1, 'UTF8') in token_hash) > 0",
                secret))
        .isZero();
    assertThat(
            fx.count(
                "SELECT count(*) FROM api_tokens WHERE token_hash = sha256(convert_to($1, 'UTF8'))",
                secret))
        .isEqualTo(1);

    assertThat(fx.client.delete("/v1/tokens/" + id, ApiFixture.ADMIN).status()).isEqualTo(204);
    assertThat(fx.client.delete("/v1/tokens/" + id, ApiFixture.ADMIN).status()).isEqualTo(204);
    assertThat(fx.client.get("/v1/instances", secret).status()).isEqualTo(401);
    assertThat(fx.client.delete("/v1/tokens/tok-0000000000000000", ApiFixture.ADMIN).status())
        .isEqualTo(404);
  }

  @Test
  void onlyBootTokensCarryMachineLabels() {
    JsonObject labels = new JsonObject().put("topology.kubernetes.io/zone", "rack-1");
    Response client =
        fx.client.post(
            "/v1/tokens",
            ApiFixture.ADMIN,
            new JsonObject().put("name", "c").put("role", "client").put("machineLabels", labels));
    assertThat(client.status()).isEqualTo(400);
    assertThat(client.body().getString("field")).isEqualTo("machineLabels");
    Response boot =
        fx.client.post(
            "/v1/tokens",
            ApiFixture.ADMIN,
            new JsonObject()
                .put("name", "rack-1")
                .put("role", "boot")
                .put("machineLabels", labels));
    assertThat(boot.status()).isEqualTo(201);
    assertThat(boot.body().getJsonObject("machineLabels")).isEqualTo(labels);
    Response bare =
        fx.client.post(
            "/v1/tokens",
            ApiFixture.ADMIN,
            new JsonObject().put("name", "bare").put("role", "boot"));
    assertThat(bare.body().getJsonObject("machineLabels"))
        .isEqualTo(new JsonObject()); // none: it adds none
    assertThat(
            fx.client.get("/v1/tokens", ApiFixture.ADMIN).body().getJsonArray("items").stream()
                .map(t -> (JsonObject) t)
                .filter(t -> t.getString("id").equals(boot.body().getString("id")))
                .findFirst()
                .orElseThrow()
                .getJsonObject("machineLabels"))
        .isEqualTo(labels);
  }

  @Test
  void fleetReaderReadsTheFleetAndEveryProjectButChangesNothing() {
    String fleet = fx.token("fleet-reader");
    assertThat(fx.client.get("/v1/machines", fleet).status()).isEqualTo(200);
    assertThat(fx.client.get("/v1/pools", fleet).status()).isEqualTo(200);
    assertThat(fx.client.get("/v1/instances", fleet).status()).isEqualTo(200);
    assertThat(fx.client.post("/v1/instances", fleet, LAUNCH).status()).isEqualTo(403);
    assertThat(fx.client.post("/v1/machines", fleet, MACHINE).status()).isEqualTo(403);
    assertThat(fx.client.get("/v1/tokens", fleet).status()).isEqualTo(403);
  }

  @Test
  void onlyAdminReachesBmcsAndHosts() {
    assertThat(Role.ADMIN.grants(Permission.OUT_OF_BAND)).isTrue();
    for (Role role : List.of(Role.FLEET_READER, Role.CLIENT, Role.READ_ONLY, Role.BOOT)) {
      assertThat(role.grants(Permission.OUT_OF_BAND)).as(role.wireName()).isFalse();
    }
  }

  @Test
  void healthNeedsNoTokenAndMetricsAreOnTheManagementPortOnly() {
    assertThat(fx.client.get("/healthz", null).status()).isEqualTo(200);
    assertThat(fx.client.get("/readyz", null).status()).isEqualTo(200);
    assertThat(fx.client.get("/metrics", ApiFixture.ADMIN).status())
        .isEqualTo(404); // not even for admin
    assertThat(fx.management.get("/metrics", null).status()).isEqualTo(200);
  }

  @Test
  void launchLatencyCountsEveryProjectSoItNeedsFleetRead() {
    assertThat(fx.client.get("/v1/launch-latency", null).status()).isEqualTo(401);
    for (String token : new String[] {client, reader}) {
      Response refused = fx.client.get("/v1/launch-latency", token);
      assertThat(refused.status()).isEqualTo(403);
      assertThat(refused.body().getString("message")).contains("fleet-read");
    }
    assertThat(fx.client.get("/v1/launch-latency", fx.token("fleet-reader")).status())
        .isEqualTo(200);
    assertThat(fx.client.get("/v1/launch-latency", ApiFixture.ADMIN).status()).isEqualTo(200);
  }
}
