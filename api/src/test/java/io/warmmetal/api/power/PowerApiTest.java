package io.warmmetal.api.power;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.RedfishBmc;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Power control through the API: settings (the password sealed, never shown), observing, switching
 * by hand.
 */
@ExtendWith(VertxExtension.class)
class PowerApiTest {

  private static JsonObject redfish(RedfishBmc bmc) {
    return new JsonObject()
        .put("driver", "redfish")
        .put("address", "127.0.0.1")
        .put("port", bmc.port)
        .put("username", RedfishBmc.USER)
        .put("password", RedfishBmc.PASSWORD)
        .put("tlsPin", bmc.caPin.value());
  }

  @Test
  void aMachineIsSwitchedThroughItsBmcAndItsPasswordNeverShows(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx);
        RedfishBmc bmc = RedfishBmc.start(vertx)) {
      // Cordoned: the standby tier leaves it to the operator.
      String machine = fx.registerMachines(1, ApiFixture.facts(8, 32), false).get(0);
      fx.client.post("/v1/machines/" + machine + "/cordon", ApiFixture.ADMIN, null);
      assertThat(
              fx.client
                  .get("/v1/machines/" + machine + "/power", ApiFixture.ADMIN)
                  .body()
                  .getString("driver"))
          .isEqualTo("none");

      Response set =
          fx.client.put("/v1/machines/" + machine + "/power", ApiFixture.ADMIN, redfish(bmc));
      assertThat(set.status()).as(set.raw()).isEqualTo(200);
      assertThat(set.raw()).doesNotContain(RedfishBmc.PASSWORD);
      assertThat(set.body().getBoolean("hasPassword")).isTrue();
      byte[] stored =
          fx.db()
              .preparedQuery("SELECT secret FROM machine_power WHERE machine_id = $1")
              .execute(Tuple.of(machine))
              .await()
              .iterator()
              .next()
              .getBuffer(0)
              .getBytes();
      assertThat(new String(stored, StandardCharsets.ISO_8859_1))
          .doesNotContain(RedfishBmc.PASSWORD);

      Response on = fx.client.post("/v1/machines/" + machine + ":power-on", ApiFixture.ADMIN, null);
      assertThat(on.status()).as(on.raw()).isEqualTo(200);
      assertThat(on.body().getString("powerState")).isEqualTo("on");
      assertThat(bmc.poweredOn()).isTrue();
      JsonObject observed =
          fx.client.get("/v1/machines/" + machine + "/power?observe=true", ApiFixture.ADMIN).body();
      assertThat(observed.getString("observed")).isEqualTo("on");
      assertThat(
              fx.client
                  .post("/v1/machines/" + machine + "/power-off", ApiFixture.ADMIN, null)
                  .status())
          .isEqualTo(200);
      assertThat(bmc.poweredOn()).isFalse();
      assertThat(
              fx.count(
                  "SELECT count(*) FROM events WHERE machine_id = $1 AND type = 'MachinePower'",
                  machine))
          .isEqualTo(2);

      // A BMC that refuses: 502 naming it, nothing recorded as switched.
      fx.client.put(
          "/v1/machines/" + machine + "/power",
          ApiFixture.ADMIN,
          redfish(bmc).put("password", "wrong"));
      Response refused =
          fx.client.post("/v1/machines/" + machine + "/power-on", ApiFixture.ADMIN, null);
      assertThat(refused.status()).isEqualTo(502);
      assertThat(refused.body().getString("code")).isEqualTo("RemoteFailure");
      assertThat(refused.raw()).contains("refused the credentials").doesNotContain("wrong");
      assertThat(
              fx.client
                  .get("/v1/machines/" + machine + "/power", ApiFixture.ADMIN)
                  .body()
                  .getString("powerState"))
          .isEqualTo("off");

      Response removed =
          fx.client.put(
              "/v1/machines/" + machine + "/power",
              ApiFixture.ADMIN,
              new JsonObject().put("driver", "none"));
      assertThat(removed.body().getString("driver")).isEqualTo("none");
      assertThat(fx.count("SELECT count(*) FROM machine_power")).isZero();
    }
  }

  @Test
  void incompleteOrImpossibleSettingsAreRefusedNamingTheProblem(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      String machine = fx.registerMachines(1, ApiFixture.facts(8, 32), true).get(0);
      String path = "/v1/machines/" + machine + "/power";
      Response noPassword =
          fx.client.put(
              path,
              ApiFixture.ADMIN,
              new JsonObject()
                  .put("driver", "ipmi")
                  .put("address", "127.0.0.1")
                  .put("username", "admin"));
      assertThat(noPassword.status()).isEqualTo(400);
      assertThat(noPassword.body().getString("field")).isEqualTo("password");
      Response noPin =
          fx.client.put(
              path,
              ApiFixture.ADMIN,
              new JsonObject()
                  .put("driver", "redfish")
                  .put("address", "127.0.0.1")
                  .put("username", "root")
                  .put("password", "x"));
      assertThat(noPin.body().getString("field")).isEqualTo("tlsPin");
      Response noSsh =
          fx.client.put(
              path,
              ApiFixture.ADMIN,
              new JsonObject().put("driver", "ssh").put("mac", "52:54:00:12:34:56"));
      assertThat(noSsh.status()).isEqualTo(409);
      assertThat(noSsh.body().getString("message")).contains("no SSH access");
      assertThat(
              fx.client
                  .put(
                      path,
                      ApiFixture.ADMIN,
                      new JsonObject().put("driver", "ssh").put("mac", "nope"))
                  .status())
          .isEqualTo(400);
      assertThat(
              fx.client
                  .put(
                      "/v1/machines/m-0000000000000000/power",
                      ApiFixture.ADMIN,
                      new JsonObject().put("driver", "none"))
                  .status())
          .isEqualTo(404);
      assertThat(
              fx.client.post(path.replace("/power", "/power-on"), ApiFixture.ADMIN, null).status())
          .isEqualTo(409);
      assertThat(fx.count("SELECT count(*) FROM machine_power")).isZero();

      // Switching off by hand is refused under an instance.
      fx.client.put(
          path,
          ApiFixture.ADMIN,
          new JsonObject()
              .put("driver", "ipmi")
              .put("address", "127.0.0.1")
              .put("port", 1)
              .put("username", "admin")
              .put("password", "x"));
      String shape =
          fx.client.get("/v1/machines/" + machine, ApiFixture.ADMIN).body().getString("shape");
      assertThat(
              fx.client
                  .post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", shape))
                  .status())
          .isEqualTo(201);
      Response underInstance =
          fx.client.post(path.replace("/power", "/power-off"), ApiFixture.ADMIN, null);
      assertThat(underInstance.status()).isEqualTo(409);
      assertThat(underInstance.body().getString("message")).contains("carries an instance");
    }
  }

  private static final List<String> HOW_REACHED =
      List.of(
          "address",
          "port",
          "username",
          "hasPassword",
          "tlsPin",
          "systemId",
          "mac",
          "wakeAddress",
          "wakePort");

  @Test
  void readOnlyNeitherReachesTheBmcNorSeesHowItIsReached(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx);
        RedfishBmc bmc = RedfishBmc.start(vertx)) {
      String machine = fx.registerMachines(1, ApiFixture.facts(8, 32), false).get(0);
      String path = "/v1/machines/" + machine + "/power";
      assertThat(fx.client.put(path, ApiFixture.ADMIN, redfish(bmc)).status()).isEqualTo(200);
      // A project's tokens do not read the fleet's power at all; an operator's read-only token
      // reads recorded state.
      for (String project : List.of(fx.token("read-only"), fx.token("client"))) {
        Response fleetOnly = fx.client.get(path, project);
        assertThat(fleetOnly.status()).isEqualTo(403);
        assertThat(fleetOnly.body().getString("message")).contains("'fleet-read'");
      }
      for (String token : List.of(fx.token("fleet-reader"))) {
        Response refused = fx.client.get(path + "?observe=true", token);
        assertThat(refused.status()).as(refused.raw()).isEqualTo(403);
        assertThat(refused.errorCode()).isEqualTo("Forbidden");
        assertThat(refused.body().getString("message"))
            .contains("'out-of-band'")
            .contains("observe");
        assertThat(refused.body().getString("field")).isEqualTo("observe");

        Response seen = fx.client.get(path + "?observe=false", token);
        assertThat(seen.status()).isEqualTo(200);
        assertThat(seen.body().getString("driver")).isEqualTo("redfish");
        assertThat(seen.body().fieldNames())
            .contains("powerState")
            .doesNotContainAnyElementsOf(HOW_REACHED);
        assertThat(seen.raw())
            .doesNotContain("127.0.0.1")
            .doesNotContain(RedfishBmc.USER)
            .doesNotContain(bmc.caPin.value());
      }
      assertThat(bmc.statusReads()).as("no BMC session for a caller without out-of-band").isZero();

      JsonObject admin = fx.client.get(path + "?observe=true", ApiFixture.ADMIN).body();
      assertThat(admin.getString("address")).isEqualTo("127.0.0.1");
      assertThat(admin.getString("username")).isEqualTo(RedfishBmc.USER);
      assertThat(admin.getString("observed")).isEqualTo("off");
      assertThat(admin.getString("observedAt")).isNotNull();
      assertThat(bmc.statusReads()).isEqualTo(1);
    }
  }

  @Test
  void credentialsTheDriverCannotSendAreRefusedAndNothingIsStored(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      String machine = fx.registerMachines(1, ApiFixture.facts(8, 32), false).get(0);
      fx.client.post(
          "/v1/machines/" + machine + "/cordon", ApiFixture.ADMIN, null); // no standby switching
      String path = "/v1/machines/" + machine + "/power";
      JsonObject ipmi =
          new JsonObject()
              .put("driver", "ipmi")
              .put("address", "10.0.0.7")
              .put("username", "admin")
              .put("password", "secret");
      assertThat(fx.client.put(path, ApiFixture.ADMIN, ipmi).status()).isEqualTo(200);
      byte[] stored = storedSecret(fx, machine);

      assertRefused(fx, path, ipmi.copy().put("password", "p".repeat(21)), "password", "20");
      // 11 characters, 22 bytes: the limit is ipmitool's, in bytes.
      assertRefused(
          fx, path, ipmi.copy().put("password", "\u00e9".repeat(11)), "password", "20 bytes");
      assertRefused(fx, path, ipmi.copy().put("username", "u".repeat(17)), "username", "16");
      assertRefused(fx, path, ipmi.copy().put("password", "line\nbreak"), "password", "control");
      assertRefused(fx, path, ipmi.copy().put("username", "ad\0min"), "username", "control");
      assertRefused(
          fx, path, ipmi.copy().put("address", "https://10.0.0.8/redfish"), "address", "not a URL");
      assertRefused(fx, path, ipmi.copy().put("address", "10.0.0.8:623"), "address", "not a URL");
      assertRefused(
          fx,
          path,
          new JsonObject()
              .put("driver", "redfish")
              .put("address", "10.0.0.8")
              .put("username", "ro:ot")
              .put("password", "x")
              .put("tlsPin", "sha256:" + "a".repeat(64)),
          "username",
          "':'");

      JsonObject after = fx.client.get(path, ApiFixture.ADMIN).body();
      assertThat(after.getString("address")).isEqualTo("10.0.0.7");
      assertThat(after.getString("username")).isEqualTo("admin");
      assertThat(storedSecret(fx, machine)).isEqualTo(stored);
      // At the limits, and an IPv6 BMC: stored.
      assertThat(
              fx.client
                  .put(
                      path,
                      ApiFixture.ADMIN,
                      ipmi.copy()
                          .put("address", "fd00::7")
                          .put("username", "u".repeat(16))
                          .put("password", "p".repeat(20)))
                  .status())
          .isEqualTo(200);
    }
  }

  private static void assertRefused(
      ApiFixture fx, String path, JsonObject body, String field, String says) {
    Response r = fx.client.put(path, ApiFixture.ADMIN, body);
    assertThat(r.status()).as(r.raw()).isEqualTo(400);
    assertThat(r.body().getString("field")).as(r.raw()).isEqualTo(field);
    assertThat(r.body().getString("message")).as(r.raw()).contains(says);
  }

  private static byte[] storedSecret(ApiFixture fx, String machine) {
    return fx.db()
        .preparedQuery("SELECT secret FROM machine_power WHERE machine_id = $1")
        .execute(Tuple.of(machine))
        .await()
        .iterator()
        .next()
        .getBuffer(0)
        .getBytes();
  }
}
