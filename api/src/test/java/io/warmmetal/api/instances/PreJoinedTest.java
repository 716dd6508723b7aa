package io.warmmetal.api.instances;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Pre-joined standby through HTTP (the joins reported as an agent would): what a standby launch and
 * a launch that takes pre-joined machines refuse, two launches racing for the same pre-joined
 * machines, a retry with the same client token, and a standby launch larger than what is warm. The
 * channel's part (a real join leaving the machine pre-joined, no second join) is {@code
 * ChannelTest}'s.
 */
@ExtendWith(VertxExtension.class)
class PreJoinedTest {
  private static final String SHAPE = "x86-8c-32g";
  private static final JsonObject CLUSTER =
      new JsonObject()
          .put("apiServer", "10.0.0.2:6443")
          .put("caCertHash", "sha256:" + "ab".repeat(32))
          .put("bootstrapToken", "abcdef.0123456789abcdef");

  private ApiFixture fx;
  private String client;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
    client = fx.token("client");
  }

  @AfterEach
  void stop() {
    fx.close();
  }

  private Response launch(JsonObject body) {
    return fx.client.post("/v1/instances", client, body);
  }

  private static JsonObject standby(int count) {
    return new JsonObject()
        .put("shape", SHAPE)
        .put("minCount", count)
        .put("standby", true)
        .put("kubernetes", CLUSTER);
  }

  private static JsonObject takingPreJoined() {
    return new JsonObject()
        .put("shape", SHAPE)
        .put("allowPreJoined", true)
        .put("kubernetes", CLUSTER);
  }

  /** {@code n} warm machines launched as standby and their joins reported: pre-joined. */
  private List<String> preJoined(int n) {
    List<String> machines = fx.registerMachines(n, ApiFixture.facts(8, 32), true);
    Response r = launch(standby(n));
    assertThat(r.status()).as(r.raw()).isEqualTo(201);
    for (String m : machines) {
      fx.report(fx.openCommands(m, "join").get(0), true);
    }
    assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'pre-joined'")).isEqualTo(n);
    return machines;
  }

  @Test
  void badPreJoiningInputIsRefusedNamingTheFieldAndWritesNothing() {
    fx.registerMachines(1, ApiFixture.facts(8, 32), true);
    String script = "ZWNobyBoaQ=="; // echo hi

    assertRefused(
        new JsonObject().put("shape", SHAPE).put("standby", true).put("userData", script),
        "userData");
    assertRefused(new JsonObject().put("shape", SHAPE).put("standby", true), "kubernetes");
    assertRefused(new JsonObject().put("shape", SHAPE).put("allowPreJoined", true), "kubernetes");
    assertRefused(standby(1).put("allowPreJoined", true), "allowPreJoined");
    assertRefused(standby(1).put("standby", "yes"), "standby"); // the contract's own check

    assertThat(fx.count("SELECT count(*) FROM launches")).isZero();
    assertThat(fx.count("SELECT count(*) FROM instances")).isZero();
    assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'warm'")).isOne();
  }

  private void assertRefused(JsonObject body, String field) {
    Response r = launch(body);
    assertThat(r.status()).as(r.raw()).isEqualTo(400);
    assertThat(r.errorCode()).isEqualTo("ValidationError");
    assertThat(r.body().getString("field")).as(r.raw()).contains(field);
  }

  @Test
  void aStandbyLaunchLargerThanWhatIsWarmIsInsufficientCapacityAndClaimsNothing() {
    fx.registerMachines(2, ApiFixture.facts(8, 32), true);

    Response r = launch(standby(3));

    assertThat(r.status()).isEqualTo(503);
    assertThat(r.errorCode()).isEqualTo("InsufficientCapacity");
    assertThat(
            r.body()
                .getJsonObject("details")
                .getJsonObject("available")
                .getJsonObject(SHAPE)
                .getInteger("warm"))
        .isEqualTo(2);
    assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'warm'")).isEqualTo(2);
    assertThat(fx.count("SELECT count(*) FROM instances")).isZero();
    assertThat(fx.count("SELECT count(*) FROM commands")).isZero();
  }

  @Test
  void launchesRacingForPreJoinedMachinesNeverShareOne() {
    List<String> preJoined = preJoined(8);
    fx.registerMachines(4, ApiFixture.facts(8, 32), true);

    // 30 launches at once for 12 machines: the 8 pre-joined go first, then the warm ones.
    List<Future<Response>> launches = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      launches.add(
          fx.client.send(
              HttpMethod.POST,
              "/v1/instances",
              client,
              takingPreJoined().put("clientToken", "race-" + i)));
    }
    Future.all(launches).await();

    Set<String> machines = new HashSet<>();
    int handedOver = 0;
    for (Future<Response> f : launches) {
      Response r = f.result();
      if (r.status() == 503) {
        assertThat(r.errorCode()).isEqualTo("InsufficientCapacity");
        continue;
      }
      assertThat(r.status()).as(r.raw()).isEqualTo(201);
      JsonObject instance = r.body().getJsonArray("instances").getJsonObject(0);
      assertThat(machines.add(instance.getString("machineId")))
          .as("machine handed out twice")
          .isTrue();
      if (instance.getBoolean("preJoined")) {
        handedOver++;
        assertThat(preJoined).contains(instance.getString("machineId"));
        assertThat(instance.getString("state")).isEqualTo("running");
      }
    }
    assertThat(machines).hasSize(12);
    assertThat(handedOver).isEqualTo(8);
    // The database agrees: no machine under two live instances, every standby instance ended.
    assertThat(
            fx.count(
                """
                SELECT count(*) FROM (SELECT machine_id FROM instances
                  WHERE state IN ('pending', 'running', 'shutting-down')
                  GROUP BY machine_id HAVING count(*) > 1) twice"""))
        .isZero();
    assertThat(fx.count("SELECT count(*) FROM instances WHERE standby AND state = 'terminated'"))
        .isEqualTo(8);
    assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'in-use'")).isEqualTo(8);
    assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'joining'")).isEqualTo(4);
    assertThat(fx.count("SELECT count(*) FROM commands WHERE type = 'join' AND status = 'queued'"))
        .isEqualTo(4);
  }

  @Test
  void aRetryWithTheSameClientTokenReplaysAndTakesNoSecondMachine() {
    preJoined(2);
    JsonObject body = takingPreJoined().put("clientToken", "claim-1");

    // Twice at once, then once more: one launch, one machine.
    List<Future<Response>> together =
        List.of(
            fx.client.send(HttpMethod.POST, "/v1/instances", client, body),
            fx.client.send(HttpMethod.POST, "/v1/instances", client, body));
    Future.all(together).await();
    Response again = launch(body);

    Set<Integer> statuses = new HashSet<>();
    together.forEach(f -> statuses.add(f.result().status()));
    assertThat(statuses).containsExactlyInAnyOrder(201, 200);
    JsonObject first = together.get(0).result().body();
    assertThat(again.status()).isEqualTo(200);
    assertThat(again.body()).isEqualTo(first);
    assertThat(together.get(1).result().body()).isEqualTo(first);
    assertThat(first.getJsonArray("instances").getJsonObject(0).getBoolean("preJoined")).isTrue();
    assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'pre-joined'")).isOne();
    assertThat(fx.count("SELECT count(*) FROM instances WHERE pre_joined")).isOne();
  }
}
