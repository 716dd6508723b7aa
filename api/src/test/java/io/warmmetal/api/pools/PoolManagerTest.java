package io.warmmetal.api.pools;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.protocol.testing.Await;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The pool manager keeps each shape between minWarm and maxWarm, and says so when it cannot. */
@ExtendWith(VertxExtension.class)
class PoolManagerTest {
  private static final String SHAPE = "x86-16c-64g";
  private ApiFixture fx;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
  }

  @AfterEach
  void stop() {
    fx.close();
  }

  private JsonObject pool() {
    return fx.client.get("/v1/pools/" + SHAPE, ApiFixture.ADMIN).body();
  }

  private Response target(int min, int max) {
    return fx.client.put(
        "/v1/pools/" + SHAPE,
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", min).put("maxWarm", max));
  }

  @Test
  void preparesStandbyMachinesUpToMinWarm() {
    List<String> machines = fx.registerMachines(5, ApiFixture.facts(16, 64), false);
    assertThat(target(3, 4).status()).isEqualTo(200);
    fx.reconcilePools();

    JsonObject pool = pool();
    assertThat(pool.getInteger("preparing")).isEqualTo(3);
    assertThat(pool.getInteger("standby")).isEqualTo(2);
    assertThat(pool.getInteger("deficit")).isZero();
    // Reconciling again changes nothing: preparing machines count toward the target.
    fx.reconcilePools();
    assertThat(fx.count("SELECT count(*) FROM commands WHERE type = 'prepare'")).isEqualTo(3);

    machines.forEach(m -> fx.openCommands(m, "prepare").forEach(c -> fx.report(c, true)));
    assertThat(pool().getInteger("warm")).isEqualTo(3);
  }

  @Test
  void replacesWhatALaunchTakes() {
    fx.registerMachines(3, ApiFixture.facts(16, 64), false);
    target(1, 1);
    fx.reconcilePools();
    String first =
        fx.client
            .get("/v1/machines?state=preparing", ApiFixture.ADMIN)
            .body()
            .getJsonArray("items")
            .getJsonObject(0)
            .getString("id");
    fx.report(fx.openCommands(first, "prepare").get(0), true);

    assertThat(
            fx.client
                .post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", SHAPE))
                .status())
        .isEqualTo(201);
    fx.reconcilePools();
    JsonObject pool = pool();
    assertThat(pool.getInteger("warm")).isZero();
    assertThat(pool.getInteger("preparing")).isEqualTo(1);
    assertThat(pool.getInteger("inUse")).isEqualTo(1);
    assertThat(pool.getInteger("standby")).isEqualTo(1);
  }

  @Test
  void reportsADeficitOnceAndClearsIt() {
    fx.registerMachines(1, ApiFixture.facts(16, 64), false);
    target(3, 5);
    fx.reconcilePools();
    fx.reconcilePools();
    assertThat(pool().getInteger("deficit")).isEqualTo(2);
    assertThat(
            fx.count(
                "SELECT count(*) FROM events WHERE type = 'PoolDeficit' AND subject = $1", SHAPE))
        .isEqualTo(1);
    assertThat(fx.scrape()).contains("warmmetal_pool_deficit{shape=\"" + SHAPE + "\"} 2.0");

    fx.registerMachines(2, ApiFixture.facts(16, 64), false);
    fx.reconcilePools();
    assertThat(pool().getInteger("deficit")).isZero();
    assertThat(fx.count("SELECT count(*) FROM events WHERE type = 'PoolSatisfied'")).isEqualTo(1);
  }

  @Test
  void movesWarmMachinesAboveMaxWarmToStandby() {
    fx.registerMachines(4, ApiFixture.facts(16, 64), true);
    target(0, 1);
    fx.reconcilePools();
    JsonObject pool = pool();
    assertThat(pool.getInteger("warm")).isEqualTo(1);
    assertThat(pool.getInteger("standby")).isEqualTo(3);
  }

  @Test
  void deletingAPoolStopsManagingIt() {
    fx.registerMachines(1, ApiFixture.facts(16, 64), false);
    target(1, 1);
    fx.reconcilePools();
    assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'preparing'")).isEqualTo(1);
    assertThat(fx.client.delete("/v1/pools/" + SHAPE, ApiFixture.ADMIN).status()).isEqualTo(204);
    assertThat(fx.client.delete("/v1/pools/" + SHAPE, ApiFixture.ADMIN).status()).isEqualTo(204);

    fx.registerMachines(2, ApiFixture.facts(16, 64), false);
    fx.reconcilePools();
    assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'standby'")).isEqualTo(2);
    assertThat(fx.client.get("/v1/pools/" + SHAPE, ApiFixture.ADMIN).status()).isEqualTo(404);
    assertThat(fx.client.get("/v1/pools", ApiFixture.ADMIN).body().getJsonArray("items")).isEmpty();
  }

  @Test
  void theTimerKeepsPoolsWithoutBeingAsked(Vertx vertx) throws Exception {
    try (ApiFixture fast = ApiFixture.start(vertx, Map.of("WARMMETAL_POOL_INTERVAL_MS", "50"))) {
      fast.registerMachines(2, ApiFixture.facts(16, 64), false);
      fast.client.put(
          "/v1/pools/" + SHAPE,
          ApiFixture.ADMIN,
          new JsonObject().put("minWarm", 2).put("maxWarm", 2));
      Await.until(
          "both preparing",
          () -> fast.count("SELECT count(*) FROM machines WHERE state = 'preparing'") >= 2);
      assertThat(fast.count("SELECT count(*) FROM machines WHERE state = 'preparing'"))
          .isEqualTo(2);
    }
  }
}
