package io.warmmetal.api.lifecycle.impl;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Presence under a handover: replicas report the agents they heard in batches, and while agents
 * move from one replica to another two batches hold many of the same machines, in whatever order
 * each replica keeps them. They must wait for each other, not deadlock (PostgreSQL would abort one,
 * and that replica's agents would not count as heard).
 */
@ExtendWith(VertxExtension.class)
class AgentPresenceTest {
  private static final int MACHINES = 800;
  private static final int BATCHES = 8;

  @Test
  void batchesOfTheSameMachinesInAnyOrderAllGoThrough(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      List<String> ids = enrolled(fx, MACHINES);
      fx.db().query("ANALYZE machines").execute().await();

      Random random = new Random(22);
      for (int round = 0; round < 5; round++) {
        List<Future<Set<String>>> batches = new ArrayList<>();
        for (int b = 0; b < BATCHES; b++) {
          Collections.shuffle(ids, random);
          Map<String, String> heard =
              new LinkedHashMap<>(); // the replica's order, as its sessions come
          ids.forEach(id -> heard.put(id, "serial-" + id));
          batches.add(fx.api.lifecycle().agentsHeard(heard));
        }
        Future.join(batches).otherwiseEmpty().await();
        for (Future<Set<String>> batch : batches) {
          assertThat(batch.cause()).as("round %d", round).isNull();
          assertThat(batch.result()).hasSize(MACHINES);
        }
      }
    }
  }

  @Test
  void aWholeReplicasAgentsFallingSilentAllGoOfflineInBatches(Vertx vertx) throws Exception {
    int silent = AgentPresence.OFFLINE_BATCH * 2 + 50;
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      enrolled(fx, silent);
      enrolled(fx, 10); // heard just now: they stay
      fx.db()
          .query(
              "UPDATE machines SET last_seen = now() - interval '1 hour' WHERE name LIKE 'node-%'")
          .execute()
          .await();
      fx.db()
          .query("UPDATE machines SET last_seen = now() WHERE name NOT LIKE 'node-%'")
          .execute()
          .await();

      assertThat(
              fx.api
                  .lifecycle()
                  .markSilentOffline(Duration.ofSeconds(45), Duration.ofSeconds(600))
                  .await())
          .isEqualTo(silent);
      assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'offline'"))
          .isEqualTo(silent);
      assertThat(
              fx.count(
                  "SELECT count(*) FROM events WHERE type = 'MachineState' AND reason LIKE 'no heartbeat%'"))
          .isEqualTo(silent);
      assertThat(
              fx.api
                  .lifecycle()
                  .markSilentOffline(Duration.ofSeconds(45), Duration.ofSeconds(600))
                  .await())
          .isZero();
    }
  }

  /** Warm machines as enrollment leaves them: each with its agent's certificate serial. */
  private static List<String> enrolled(ApiFixture fx, int n) {
    String prefix = fx.count("SELECT count(*) FROM machines") == 0 ? "node-" : "heard-";
    List<Future<String>> registered = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      registered.add(
          fx.client
              .send(
                  HttpMethod.POST,
                  "/v1/machines",
                  ApiFixture.ADMIN,
                  new JsonObject()
                      .put("name", prefix + i)
                      .put("prepared", true)
                      .put("facts", ApiFixture.facts(16, 64)))
              .map(r -> r.body().getString("id")));
    }
    List<String> ids = new ArrayList<>(Future.all(registered).await().list());
    fx.db()
        .query("UPDATE machines SET cert_serial = 'serial-' || id WHERE cert_serial IS NULL")
        .execute()
        .await();
    return ids;
  }
}
