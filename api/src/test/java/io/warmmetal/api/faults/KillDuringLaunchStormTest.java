package io.warmmetal.api.faults;

import static io.warmmetal.api.testing.ApiProcess.count;
import static io.warmmetal.api.testing.ApiProcess.rows;
import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.junit5.VertxExtension;
import io.vertx.openapi.contract.OpenAPIContract;
import io.warmmetal.api.WarmMetalApi;
import io.warmmetal.api.testing.ApiClient;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.ApiProcess;
import io.warmmetal.api.testing.TestDatabase;
import io.warmmetal.protocol.testing.Await;
import java.nio.file.Files;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * kill -9 of the API process in the middle of a storm of launches, round after round: every answer
 * lost to the kill is retried with its client token once the API is back, and after each round the
 * database must hold exactly what the answers said — every acknowledged launch with its instances,
 * nothing launched twice, no machine bound to two instances, no busy machine without its instance.
 * Sized by {@code -Dwarmmetal.faults.rounds} (4), {@code -Dwarmmetal.faults.launches} (launches per
 * round, 120) and {@code -Dwarmmetal.faults.seed}.
 */
@ExtendWith(VertxExtension.class)
@Tag("processes")
class KillDuringLaunchStormTest {
  private static final int ROUNDS = Integer.getInteger("warmmetal.faults.rounds", 4);
  private static final int LAUNCHES = Integer.getInteger("warmmetal.faults.launches", 120);
  private static final long SEED = Long.getLong("warmmetal.faults.seed", 9L);
  private static final String SHAPE = "x86-8c-32g";
  private static final String LIVE = "('pending', 'running', 'shutting-down')";

  /** A launch's final answer as the client knows it. */
  private record Answer(int status, String launchId, List<String> instances) {}

  @Test
  void killMinusNineMidStormLosesNoAcknowledgedLaunchAndLaunchesNothingTwice(Vertx vertx)
      throws Exception {
    Random random = new Random(SEED);
    String db = TestDatabase.freshDatabaseUrl();
    Map<String, String> env = new HashMap<>();
    env.put("WARMMETAL_DATABASE_URL", db);
    env.put("WARMMETAL_DATA_DIR", Files.createTempDirectory("warmmetal-kill").toString());
    env.put("WARMMETAL_ADMIN_TOKEN", ApiFixture.ADMIN);
    int machines =
        ROUNDS * LAUNCHES * 3 / 4; // the last rounds run out: refusals are part of the storm
    long started = System.currentTimeMillis();
    try (ApiProcess api = ApiProcess.start("api", env);
        Connection sql = ApiProcess.jdbc(db)) {
      OpenAPIContract contract = OpenAPIContract.from(vertx, WarmMetalApi.CONTRACT).await();
      ApiClient client = new ApiClient(vertx, api.httpPort, contract);
      for (int i = 0; i < machines; i++) {
        var r =
            client.post(
                "/v1/machines",
                ApiFixture.ADMIN,
                new JsonObject()
                    .put("name", "storm-" + i)
                    .put("address", "127.0.0.1")
                    .put("facts", ApiFixture.facts(8, 32))
                    .put("prepared", true));
        assertThat(r.status()).as(r.raw()).isEqualTo(201);
      }
      String token =
          client
              .post(
                  "/v1/tokens",
                  ApiFixture.ADMIN,
                  new JsonObject().put("name", "storm").put("role", "client"))
              .body()
              .getString("token");
      WebClient http =
          WebClient.create(
              vertx,
              new WebClientOptions().setKeepAlive(true),
              new PoolOptions().setHttp1MaxSize(32));

      Map<String, Answer> answers = new ConcurrentHashMap<>(); // client token -> final answer
      Map<String, JsonObject> bodies = new HashMap<>();
      int acknowledgedBeforeKill = 0;
      int lost = 0;
      int replays = 0;
      int relaunched = 0;
      int refused = 0;
      for (int round = 1; round <= ROUNDS; round++) {
        List<String> tokens = new ArrayList<>();
        for (int i = 0; i < LAUNCHES; i++) {
          String clientToken = "r" + round + "-" + i;
          tokens.add(clientToken);
          bodies.put(
              clientToken,
              new JsonObject()
                  .put("shape", SHAPE)
                  .put("clientToken", clientToken)
                  .put("labels", new JsonObject().put("round", String.valueOf(round))));
        }
        // The storm: every launch sent at once (32 connections); the kill lands once a random share
        // has answered.
        int killAfter = LAUNCHES / 5 + random.nextInt(LAUNCHES / 2);
        AtomicInteger answered = new AtomicInteger();
        Map<String, Future<Answer>> inFlight = new HashMap<>();
        for (String t : tokens) {
          inFlight.put(
              t,
              launch(http, api.httpPort, token, bodies.get(t))
                  .onSuccess(a -> answered.incrementAndGet()));
        }
        Await.until(
            "a share of the storm answered",
            () ->
                answered.get() >= killAfter
                    || inFlight.values().stream().allMatch(Future::isComplete),
            60_000);
        api.kill();
        Future.join(new ArrayList<>(inFlight.values())).otherwiseEmpty().await();
        List<String> lostTokens = new ArrayList<>();
        for (String t : tokens) {
          Future<Answer> f = inFlight.get(t);
          if (f.succeeded()) {
            answers.put(t, f.result());
            if (f.result().status() == 201) {
              acknowledgedBeforeKill++;
            } else {
              refused++;
            }
          } else if (f.cause() instanceof AssertionError wrong) {
            throw wrong;
          } else {
            lostTokens.add(t);
          }
        }
        lost += lostTokens.size();

        api.start();
        for (String t : lostTokens) {
          Answer retry = launch(http, api.httpPort, token, bodies.get(t)).await();
          answers.put(t, retry);
          switch (retry.status()) {
            case 200 -> replays++;
            case 201 -> relaunched++;
            default -> refused++;
          }
        }
        // A retry of an answered launch replays it: same launch, same instances, nothing new.
        String someAcked =
            tokens.stream().filter(t -> answers.get(t).status() == 201).findFirst().orElse(null);
        if (someAcked != null) {
          Answer again = launch(http, api.httpPort, token, bodies.get(someAcked)).await();
          assertThat(again.status()).isEqualTo(200);
          assertThat(again.launchId()).isEqualTo(answers.get(someAcked).launchId());
          assertThat(again.instances()).isEqualTo(answers.get(someAcked).instances());
        }
        checkInvariants(sql, answers, machines, round);
      }
      long elapsed = System.currentTimeMillis() - started;
      System.out.printf(
          "kill -9 storm: %d rounds x %d launches on %d machines: %d acknowledged (201) before the "
              + "kills, %d answers lost and retried (%d replayed 200, %d launched 201 on retry), %d refused "
              + "(503), %d ms%n",
          ROUNDS,
          LAUNCHES,
          machines,
          acknowledgedBeforeKill,
          lost,
          replays,
          relaunched,
          refused,
          elapsed);
      assertThat(lost).as("the kills interrupted launches").isPositive();
    }
  }

  private static Future<Answer> launch(WebClient http, int port, String token, JsonObject body) {
    return http.request(HttpMethod.POST, port, "127.0.0.1", "/v1/instances")
        .timeout(30_000)
        .putHeader("Authorization", "Bearer " + token)
        .sendJsonObject(body)
        .map(
            r -> {
              JsonObject json = r.bodyAsJsonObject();
              if (r.statusCode() == 200 || r.statusCode() == 201) {
                List<String> ids = new ArrayList<>();
                json.getJsonArray("instances")
                    .forEach(i -> ids.add(((JsonObject) i).getString("id")));
                return new Answer(r.statusCode(), json.getString("launchId"), ids);
              }
              if (r.statusCode() != 503 || !"InsufficientCapacity".equals(json.getString("code"))) {
                throw new AssertionError(
                    "launch answered " + r.statusCode() + ": " + r.bodyAsString());
              }
              return new Answer(r.statusCode(), null, List.of());
            });
  }

  private static void checkInvariants(
      Connection sql, Map<String, Answer> answers, int machines, int round) {
    String at = "after round " + round + ": ";
    assertThat(count(sql, "SELECT count(*) FROM machines")).as(at + "machines").isEqualTo(machines);
    assertThat(
            rows(
                sql,
                "SELECT machine_id FROM instances WHERE state IN "
                    + LIVE
                    + " GROUP BY machine_id HAVING count(*) > 1"))
        .as(at + "machines bound to two live instances")
        .isEmpty();
    assertThat(
            rows(
                sql,
                "SELECT m.id FROM machines m LEFT JOIN instances i ON i.id = m.instance_id"
                    + " WHERE m.instance_id IS NOT NULL AND (i.id IS NULL OR i.machine_id <> m.id OR i.state NOT IN "
                    + LIVE
                    + ")"))
        .as(at + "machines pointing at no live instance of theirs")
        .isEmpty();
    assertThat(
            rows(
                sql,
                "SELECT id FROM machines WHERE state IN ('joining', 'in-use') AND instance_id IS NULL"))
        .as(at + "busy machines without an instance")
        .isEmpty();
    assertThat(
            rows(
                sql,
                "SELECT i.id FROM instances i JOIN machines m ON m.id = i.machine_id WHERE i.state IN "
                    + LIVE
                    + " AND m.instance_id IS DISTINCT FROM i.id"))
        .as(at + "live instances their machine disowns")
        .isEmpty();
    assertThat(
            rows(sql, "SELECT id FROM machines WHERE state = 'warm' AND instance_id IS NOT NULL"))
        .as(at + "warm machines holding an instance")
        .isEmpty();
    assertThat(
            rows(
                sql,
                "SELECT i.id FROM instances i WHERE i.state = 'pending' AND (SELECT count(*) FROM commands c"
                    + " WHERE c.instance_id = i.id AND c.type = 'join') <> 1"))
        .as(at + "pending instances without one join")
        .isEmpty();
    assertThat(count(sql, "SELECT count(*) FROM machines WHERE state IN ('joining', 'in-use')"))
        .as(at + "busy machines = live instances")
        .isEqualTo(count(sql, "SELECT count(*) FROM instances WHERE state IN " + LIVE));

    // The database holds exactly what the answers said: every launch answered 200/201 with its
    // instances, and no
    // launch or instance the client was never told of (every lost answer has been retried by now).
    Set<String> launches = new HashSet<>();
    Set<String> instances = new HashSet<>();
    for (Answer a : answers.values()) {
      if (a.launchId() != null) {
        launches.add(a.launchId());
        instances.addAll(a.instances());
        assertThat(a.instances()).as(at + "instances of launch " + a.launchId()).hasSize(1);
      }
    }
    assertThat(Set.copyOf(rows(sql, "SELECT id FROM launches")))
        .as(at + "launches in the database")
        .isEqualTo(launches);
    assertThat(Set.copyOf(rows(sql, "SELECT id FROM instances")))
        .as(at + "instances in the database")
        .isEqualTo(instances);
    assertThat(rows(sql, "SELECT launch_id FROM instances GROUP BY launch_id HAVING count(*) <> 1"))
        .as(at + "launches with other than one instance")
        .isEmpty();
    assertThat(count(sql, "SELECT count(*) FROM launches"))
        .as(at + "one launch per client token")
        .isEqualTo(count(sql, "SELECT count(DISTINCT client_token) FROM launches"));
  }
}
