package io.warmmetal.api.power;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.RedfishBmc;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Power control through the API: settings (the password sealed, never shown), observing, switching by hand. */
@ExtendWith(VertxExtension.class)
class PowerApiTest {

  private static JsonObject redfish(RedfishBmc bmc) {
    return new JsonObject().put("driver", "redfish").put("address", "127.0.0.1").put("port", bmc.port)
        .put("username", RedfishBmc.USER).put("password", RedfishBmc.PASSWORD).put("tlsPin", bmc.caPin.value());
  }

  @Test
  void aMachineIsSwitchedThroughItsBmcAndItsPasswordNeverShows(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx); RedfishBmc bmc = RedfishBmc.start(vertx)) {
      // Cordoned: the standby tier leaves it to the operator.
      String machine = fx.registerMachines(1, ApiFixture.facts(8, 32), false).get(0);
      fx.client.post("/v1/machines/" + machine + "/cordon", ApiFixture.ADMIN, null);
      assertThat(fx.client.get("/v1/machines/" + machine + "/power", ApiFixture.ADMIN).body().getString("driver"))
          .isEqualTo("none");

      Response set = fx.client.put("/v1/machines/" + machine + "/power", ApiFixture.ADMIN, redfish(bmc));
      assertThat(set.status()).as(set.raw()).isEqualTo(200);
      assertThat(set.raw()).doesNotContain(RedfishBmc.PASSWORD);
      assertThat(set.body().getBoolean("hasPassword")).isTrue();
      byte[] stored = fx.db().preparedQuery("SELECT secret FROM machine_power WHERE machine_id = $1")
          .execute(io.vertx.sqlclient.Tuple.of(machine)).await().iterator().next().getBuffer(0).getBytes();
      assertThat(new String(stored, StandardCharsets.ISO_8859_1)).doesNotContain(RedfishBmc.PASSWORD);

      Response on = fx.client.post("/v1/machines/" + machine + ":power-on", ApiFixture.ADMIN, null);
      assertThat(on.status()).as(on.raw()).isEqualTo(200);
      assertThat(on.body().getString("powerState")).isEqualTo("on");
      assertThat(bmc.poweredOn()).isTrue();
      JsonObject observed = fx.client.get("/v1/machines/" + machine + "/power?observe=true", ApiFixture.ADMIN)
          .body();
      assertThat(observed.getString("observed")).isEqualTo("on");
      assertThat(fx.client.post("/v1/machines/" + machine + "/power-off", ApiFixture.ADMIN, null).status())
          .isEqualTo(200);
      assertThat(bmc.poweredOn()).isFalse();
      assertThat(fx.count("SELECT count(*) FROM events WHERE machine_id = $1 AND type = 'MachinePower'", machine))
          .isEqualTo(2);

      // A BMC that refuses: 502 naming it, nothing recorded as switched.
      fx.client.put("/v1/machines/" + machine + "/power", ApiFixture.ADMIN, redfish(bmc).put("password", "wrong"));
      Response refused = fx.client.post("/v1/machines/" + machine + "/power-on", ApiFixture.ADMIN, null);
      assertThat(refused.status()).isEqualTo(502);
      assertThat(refused.body().getString("code")).isEqualTo("RemoteFailure");
      assertThat(refused.raw()).contains("refused the credentials").doesNotContain("wrong");
      assertThat(fx.client.get("/v1/machines/" + machine + "/power", ApiFixture.ADMIN).body()
          .getString("powerState")).isEqualTo("off");

      Response removed = fx.client.put("/v1/machines/" + machine + "/power", ApiFixture.ADMIN,
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
      Response noPassword = fx.client.put(path, ApiFixture.ADMIN, new JsonObject().put("driver", "ipmi")
          .put("address", "127.0.0.1").put("username", "admin"));
      assertThat(noPassword.status()).isEqualTo(400);
      assertThat(noPassword.body().getString("field")).isEqualTo("password");
      Response noPin = fx.client.put(path, ApiFixture.ADMIN, new JsonObject().put("driver", "redfish")
          .put("address", "127.0.0.1").put("username", "root").put("password", "x"));
      assertThat(noPin.body().getString("field")).isEqualTo("tlsPin");
      Response noSsh = fx.client.put(path, ApiFixture.ADMIN, new JsonObject().put("driver", "ssh")
          .put("mac", "52:54:00:12:34:56"));
      assertThat(noSsh.status()).isEqualTo(409);
      assertThat(noSsh.body().getString("message")).contains("no SSH access");
      assertThat(fx.client.put(path, ApiFixture.ADMIN, new JsonObject().put("driver", "ssh").put("mac", "nope"))
          .status()).isEqualTo(400);
      assertThat(fx.client.put("/v1/machines/m-0000000000000000/power", ApiFixture.ADMIN,
          new JsonObject().put("driver", "none")).status()).isEqualTo(404);
      assertThat(fx.client.post(path.replace("/power", "/power-on"), ApiFixture.ADMIN, null).status())
          .isEqualTo(409);
      assertThat(fx.count("SELECT count(*) FROM machine_power")).isZero();

      // Switching off by hand is refused under an instance.
      fx.client.put(path, ApiFixture.ADMIN, new JsonObject().put("driver", "ipmi").put("address", "127.0.0.1")
          .put("port", 1).put("username", "admin").put("password", "x"));
      String shape = fx.client.get("/v1/machines/" + machine, ApiFixture.ADMIN).body().getString("shape");
      assertThat(fx.client.post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", shape)).status())
          .isEqualTo(201);
      Response underInstance = fx.client.post(path.replace("/power", "/power-off"), ApiFixture.ADMIN, null);
      assertThat(underInstance.status()).isEqualTo(409);
      assertThat(underInstance.body().getString("message")).contains("carries an instance");
    }
  }
}
