package io.warmmetal.api.lifecycle.impl;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.Ids;
import io.warmmetal.api.testing.ApiFixture;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Launches gathered into one database call: they share the call, never a machine, and one launch's
 * refusal or error never reaches the others. Runs the function on the real PostgreSQL; a table lock
 * held by another connection keeps the first call in the database while the rest arrive, so the
 * rest go together.
 */
@ExtendWith(VertxExtension.class)
class LaunchBatchesTest {
  private static final String SHAPE = "x86-16c-64g";
  private ApiFixture fx;
  private final AtomicInteger calls = new AtomicInteger();
  private final AtomicInteger returned = new AtomicInteger();
  private final List<Integer> sizes = new ArrayList<>();

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
  }

  @AfterEach
  void stop() {
    fx.close();
  }

  private LaunchBatches batches(int maxBatch) {
    return new LaunchBatches(
        fx.db(),
        maxBatch,
        1,
        new LaunchBatches.Observer() {
          @Override
          public void sent(long[] waitedNanos) {
            calls.incrementAndGet();
            synchronized (sizes) {
              sizes.add(waitedNanos.length);
            }
          }

          @Override
          public void returned(long nanos) {
            returned.incrementAndGet();
          }
        });
  }

  @Test
  void launchesArrivingTogetherShareOneCallAndNeverAMachine() {
    fx.registerMachines(30, ApiFixture.facts(16, 64), true);
    LaunchBatches batches = batches(100);

    List<Future<JsonObject>> outcomes =
        whileLaunchesAreLocked(
            () -> {
              List<Future<JsonObject>> all = new ArrayList<>();
              for (int i = 0; i < 25; i++) {
                all.add(batches.submit(request("tok-" + i, SHAPE, 1, 1)));
              }
              return all;
            });

    Set<String> machines = new HashSet<>();
    for (Future<JsonObject> f : outcomes) {
      JsonObject outcome = f.result();
      assertThat(outcome.getString("outcome")).isEqualTo("launched");
      String machine = outcome.getJsonArray("instances").getJsonObject(0).getString("machineId");
      assertThat(machines.add(machine)).as("machine handed out twice").isTrue();
    }
    assertThat(sizes).containsExactly(1, 24); // the first went alone; the rest arrived meanwhile
    assertThat(returned).hasValue(2);
    assertThat(
            fx.count(
                "SELECT count(*) FROM machines WHERE state = 'joining' AND instance_id IS NOT NULL"))
        .isEqualTo(25);
    assertThat(fx.count("SELECT count(*) FROM commands WHERE type = 'join' AND status = 'queued'"))
        .isEqualTo(25);
    assertThat(fx.count("SELECT count(DISTINCT launch_id) FROM instances")).isEqualTo(25);
  }

  @Test
  void eachLaunchInABatchGetsItsOwnOutcome() {
    fx.registerMachines(3, ApiFixture.facts(16, 64), true);
    LaunchBatches batches = batches(100);
    LaunchBatches.Request same = request("tok-same", SHAPE, 1, 1);

    // A batch goes in (project, client token) order: tok-a-too-many claims the two machines left,
    // then lets them go.
    List<Future<JsonObject>> outcomes =
        whileLaunchesAreLocked(
            () ->
                List.of(
                    batches.submit(request("tok-first", SHAPE, 1, 1)),
                    batches.submit(request("tok-a-too-many", SHAPE, 5, 5)),
                    batches.submit(request("tok-nothing", "no-such-shape", 1, 1)),
                    batches.submit(same),
                    batches.submit(
                        sameToken(
                            same, request("tok-same", SHAPE, 1, 1).launchId(), same.requestHash())),
                    batches.submit(
                        sameToken(
                            same, request("tok-same", SHAPE, 1, 1).launchId(), new byte[] {9})),
                    batches.submit(request("tok-b-after", SHAPE, 1, 1))));

    assertThat(outcomes.get(0).result().getString("outcome")).isEqualTo("launched");
    JsonObject tooMany = outcomes.get(1).result();
    assertThat(tooMany.getString("outcome")).isEqualTo("insufficient");
    assertThat(tooMany.getInteger("claimable")).isEqualTo(2);
    assertThat(outcomes.get(2).result().getString("outcome")).isEqualTo("no-such-shape");
    assertThat(outcomes.get(3).result().getString("outcome")).isEqualTo("launched");
    assertThat(outcomes.get(4).result().getString("outcome")).isEqualTo("replayed");
    assertThat(outcomes.get(4).result().getString("launchId")).isEqualTo(same.launchId());
    assertThat(outcomes.get(5).result().getString("outcome")).isEqualTo("mismatch");
    // The refused launch kept nothing, so the one after it (and tok-same) still find machines.
    assertThat(outcomes.get(6).result().getString("outcome")).isEqualTo("launched");
    assertThat(outcomes.get(6).result().getJsonArray("instances")).hasSize(1);
    assertThat(fx.count("SELECT count(*) FROM launches")).isEqualTo(3);
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(3);
    assertThat(sizes).containsExactly(1, 6);
  }

  @Test
  void aBatchGoesInClientTokenOrderWhicheverCallerSentEachLaunch() {
    fx.registerMachines(1, ApiFixture.facts(16, 64), true);
    LaunchBatches batches = batches(100);
    // Were the caller part of the order, tok-b-one (caller tok-a) would go first and take the
    // machine.
    LaunchBatches.Request two = byCaller(request("tok-a-two", SHAPE, 2, 2), "tok-z");
    LaunchBatches.Request one = byCaller(request("tok-b-one", SHAPE, 1, 1), "tok-a");
    LaunchBatches.Request rotated =
        byCaller(sameToken(one, Ids.launchId(), one.requestHash()), "tok-rotated");

    List<Future<JsonObject>> outcomes =
        whileLaunchesAreLocked(
            () ->
                List.of(
                    batches.submit(
                        request(
                            "tok-first",
                            "no-such-shape",
                            1,
                            1)), // goes alone; the rest queue behind it
                    batches.submit(one),
                    batches.submit(rotated),
                    batches.submit(two)));

    JsonObject tooMany = outcomes.get(3).result();
    assertThat(tooMany.getString("outcome")).isEqualTo("insufficient");
    assertThat(tooMany.getInteger("claimable")).as("went before tok-b-one").isEqualTo(1);
    assertThat(outcomes.get(1).result().getString("outcome")).isEqualTo("launched");
    // The same client token from another caller of the project is the same launch.
    assertThat(outcomes.get(2).result().getString("outcome")).isEqualTo("replayed");
    assertThat(outcomes.get(2).result().getString("launchId")).isEqualTo(one.launchId());
    assertThat(sizes).containsExactly(1, 3);
  }

  @Test
  void aLaunchBeyondItsQuotaCountsTheBatchsEarlierClaimsInUse() {
    fx.registerMachines(5, ApiFixture.facts(16, 64), true);
    fx.db()
        .preparedQuery(
            "INSERT INTO project_quotas (project, shape, max_instances) VALUES ('default', $1, 2)")
        .execute(Tuple.of(SHAPE))
        .await();
    LaunchBatches batches = batches(100);

    List<Future<JsonObject>> outcomes =
        whileLaunchesAreLocked(
            () ->
                List.of(
                    batches.submit(
                        request(
                            "tok-first",
                            SHAPE,
                            1,
                            1)), // goes alone; the rest share a call behind it
                    batches.submit(request("tok-second", SHAPE, 1, 1)),
                    batches.submit(request("tok-third", SHAPE, 1, 1))));

    assertThat(outcomes.get(1).result().getString("outcome")).isEqualTo("launched");
    JsonObject refused = outcomes.get(2).result();
    assertThat(refused.getString("outcome")).isEqualTo("quota-exceeded");
    // One instance committed before the call, one claimed earlier in it: two in use, as the next
    // launch finds.
    assertThat(refused.getJsonObject("quotas").getJsonObject(SHAPE).getInteger("inUse"))
        .isEqualTo(2);
    assertThat(sizes).containsExactly(1, 2);
  }

  @Test
  void launchesOfOneBatchNeverShareAPreJoinedMachine() {
    String machine = fx.registerMachines(1, ApiFixture.facts(16, 64), true).get(0);
    var standby =
        fx.client.post(
            "/v1/instances",
            ApiFixture.ADMIN,
            new JsonObject().put("shape", SHAPE).put("standby", true).put("kubernetes", CLUSTER));
    assertThat(standby.status()).as(standby.raw()).isEqualTo(201);
    fx.report(fx.openCommands(machine, "join").get(0), true);
    LaunchBatches batches = batches(100);

    List<Future<JsonObject>> outcomes =
        whileLaunchesAreLocked(
            () ->
                List.of(
                    batches.submit(request("tok-first", "no-such-shape", 1, 1)), // goes alone
                    batches.submit(takingPreJoined(request("tok-a", SHAPE, 1, 1))),
                    batches.submit(takingPreJoined(request("tok-b", SHAPE, 1, 1)))));

    JsonObject taken = outcomes.get(1).result();
    assertThat(taken.getString("outcome")).isEqualTo("launched");
    assertThat(taken.getJsonArray("instances").getJsonObject(0).getString("machineId"))
        .isEqualTo(machine);
    assertThat(taken.getJsonArray("instances").getJsonObject(0).getBoolean("preJoined")).isTrue();
    JsonObject second = outcomes.get(2).result();
    assertThat(second.getString("outcome")).isEqualTo("insufficient");
    assertThat(second.getJsonObject("available").getJsonObject(SHAPE).getInteger("preJoined"))
        .isZero();
    assertThat(sizes).containsExactly(1, 2);
  }

  @Test
  void aBatchTheDatabaseRefusesIsTriedAgainLaunchByLaunch() {
    fx.registerMachines(5, ApiFixture.facts(16, 64), true);
    LaunchBatches batches = batches(100);
    LaunchBatches.Request broken = request("tok-broken", SHAPE, 1, 1);
    broken.instanceIds()[0] = null; // instances.id is NOT NULL: the whole call fails

    List<Future<JsonObject>> outcomes =
        whileLaunchesAreLocked(
            () ->
                List.of(
                    batches.submit(request("tok-a", SHAPE, 1, 1)),
                    batches.submit(request("tok-b", SHAPE, 1, 1)),
                    batches.submit(broken),
                    batches.submit(request("tok-c", SHAPE, 1, 1))));

    assertThat(outcomes.get(0).result().getString("outcome")).isEqualTo("launched");
    assertThat(outcomes.get(1).result().getString("outcome")).isEqualTo("launched");
    assertThat(outcomes.get(2).failed()).isTrue();
    assertThat(outcomes.get(3).result().getString("outcome")).isEqualTo("launched");
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(3);
    assertThat(fx.count("SELECT count(*) FROM launches WHERE client_token = 'tok-broken'"))
        .isZero();
  }

  /**
   * Submits while another transaction holds the launches table, so the first call waits in the
   * database and the launches submitted meanwhile queue behind it; then lets go and waits for every
   * outcome.
   */
  private List<Future<JsonObject>> whileLaunchesAreLocked(
      Supplier<List<Future<JsonObject>>> submit) {
    SqlConnection locker = fx.db().getConnection().await();
    Transaction tx = locker.begin().await();
    locker.query("LOCK TABLE launches IN EXCLUSIVE MODE").execute().await();
    List<Future<JsonObject>> outcomes = submit.get();
    tx.commit().await();
    locker.close().await();
    Future.join(new ArrayList<>(outcomes))
        .transform(done -> Future.succeededFuture())
        .await(); // all in, failed or not
    return outcomes;
  }

  private static LaunchBatches.Request request(String clientToken, String shape, int min, int max) {
    String[] instanceIds = new String[max];
    String[] joinIds = new String[max];
    for (int i = 0; i < max; i++) {
      instanceIds[i] = Ids.instanceId();
      joinIds[i] = Ids.commandId();
    }
    return new LaunchBatches.Request(
        Ids.launchId(),
        "default",
        "tok-test",
        clientToken,
        Ids.sha256(clientToken + shape + min),
        List.of(shape),
        false,
        min,
        max,
        new JsonObject(),
        null,
        null,
        false,
        false,
        new JsonObject(),
        instanceIds,
        joinIds,
        new String[max],
        false,
        false);
  }

  private static final JsonObject CLUSTER =
      new JsonObject()
          .put("apiServer", "10.0.0.2:6443")
          .put("caCertHash", "sha256:" + "ab".repeat(32))
          .put("bootstrapToken", "abcdef.0123456789abcdef");

  /** The request, taking a machine pre-joined to {@link #CLUSTER} (its join without the token). */
  private static LaunchBatches.Request takingPreJoined(LaunchBatches.Request r) {
    JsonObject publicJoin = CLUSTER.copy();
    publicJoin.remove("bootstrapToken");
    return copy(
        r,
        r.launchId(),
        r.caller(),
        r.requestHash(),
        publicJoin,
        true,
        r.instanceIds(),
        r.joinIds());
  }

  private static LaunchBatches.Request byCaller(LaunchBatches.Request r, String caller) {
    return copy(
        r,
        r.launchId(),
        caller,
        r.requestHash(),
        r.kubernetes(),
        r.allowPreJoined(),
        r.instanceIds(),
        r.joinIds());
  }

  private static LaunchBatches.Request sameToken(
      LaunchBatches.Request r, String launchId, byte[] hash) {
    return copy(
        r,
        launchId,
        r.caller(),
        hash,
        r.kubernetes(),
        r.allowPreJoined(),
        new String[] {Ids.instanceId()},
        new String[] {Ids.commandId()});
  }

  /** The request with these parts in place of its own (a record has no withers). */
  private static LaunchBatches.Request copy(
      LaunchBatches.Request r,
      String launchId,
      String caller,
      byte[] hash,
      JsonObject kubernetes,
      boolean allowPreJoined,
      String[] instanceIds,
      String[] joinIds) {
    return new LaunchBatches.Request(
        launchId,
        r.project(),
        caller,
        r.clientToken(),
        hash,
        r.shapes(),
        r.allowPreparing(),
        r.min(),
        r.max(),
        r.labels(),
        kubernetes,
        r.secrets(),
        r.hasUserData(),
        r.allowStandby(),
        r.machineLabels(),
        instanceIds,
        joinIds,
        new String[instanceIds.length],
        r.standby(),
        allowPreJoined);
  }
}
