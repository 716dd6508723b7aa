package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.lifecycle.Committed;
import io.warmmetal.api.lifecycle.MachineState;
import io.warmmetal.api.metrics.FleetMetrics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One pass of the pool manager over every pool, in one transaction holding an advisory lock, so that with many
 * API replicas passes run one after another and each sees what the previous one did:
 * <ul>
 *   <li>warm + preparing below {@code minWarm}: standby machines get a {@code prepare} command;</li>
 *   <li>nothing left to prepare: the shortfall is the pool's deficit (an event when it changes, and a metric);</li>
 *   <li>warm above {@code maxWarm}: the surplus goes to {@code standby}.</li>
 * </ul>
 */
final class PoolReconciler {
  /** Advisory lock key: "warmpool" in ASCII. */
  private static final long LOCK_KEY = 0x7761726d706f6f6cL;

  private final Pool db;
  private final FleetMetrics metrics;
  private final Commits commits;

  PoolReconciler(Pool db, FleetMetrics metrics, Commits commits) {
    this.db = db;
    this.metrics = metrics;
    this.commits = commits;
  }

  Future<Void> reconcile() {
    List<String> prepared = new ArrayList<>();
    return Tx.run(db, tx -> {
          prepared.clear(); // a retried transaction starts over
          return tx.preparedQuery("SELECT pg_advisory_xact_lock($1)").execute(Tuple.of(LOCK_KEY))
              .compose(locked -> tx.query("SELECT shape, min_warm, max_warm, deficit FROM pools ORDER BY shape")
                  .execute())
              .compose(pools -> {
                Future<Void> chain = Future.succeededFuture();
                for (Row pool : pools) {
                  chain = chain.compose(x -> reconcile(tx, pool, prepared));
                }
                return chain;
              });
        })
        .onSuccess(x -> commits.publish(Committed.commands(List.copyOf(prepared))))
        .compose(x -> publishCounts());
  }

  private Future<Void> reconcile(SqlConnection tx, Row pool, List<String> prepared) {
    String shape = pool.getString("shape");
    int minWarm = pool.getInteger("min_warm");
    int maxWarm = pool.getInteger("max_warm");
    return tx.preparedQuery("""
            SELECT count(*) FILTER (WHERE state = 'warm') AS warm,
                   count(*) FILTER (WHERE state = 'preparing') AS preparing
            FROM machines WHERE shape = $1 AND NOT cordoned AND instance_id IS NULL""")
        .execute(Tuple.of(shape))
        .compose(rows -> {
          Row c = rows.iterator().next();
          int ready = (int) (c.getLong("warm") + c.getLong("preparing"));
          int surplus = (int) (c.getLong("warm") - maxWarm);
          if (ready < minWarm) {
            return prepareStandby(tx, shape, minWarm - ready, prepared)
                .compose(started -> recordDeficit(tx, pool, minWarm - ready - started));
          }
          Future<Void> demoted = surplus > 0 ? demote(tx, shape, surplus) : Future.succeededFuture();
          return demoted.compose(x -> recordDeficit(tx, pool, 0));
        });
  }

  private static Future<Integer> prepareStandby(SqlConnection tx, String shape, int wanted, List<String> prepared) {
    return tx.preparedQuery("""
            SELECT id FROM machines WHERE shape = $1 AND state = 'standby' AND NOT cordoned AND instance_id IS NULL
            ORDER BY seq LIMIT $2 FOR UPDATE SKIP LOCKED""")
        .execute(Tuple.of(shape, wanted))
        .compose(rows -> {
          List<String> ids = new ArrayList<>();
          rows.forEach(r -> ids.add(r.getString("id")));
          prepared.addAll(ids);
          Future<Void> chain = Future.succeededFuture();
          for (String id : ids) {
            chain = chain.compose(x -> Transitions.machine(tx, id, MachineState.STANDBY, MachineState.PREPARING,
                    "pool below minWarm"))
                .compose(x -> Transitions.enqueue(tx, id, null, "prepare"))
                .mapEmpty();
          }
          return chain.map(ids.size());
        });
  }

  private static Future<Void> demote(SqlConnection tx, String shape, int surplus) {
    return tx.preparedQuery("""
            SELECT id FROM machines WHERE shape = $1 AND state = 'warm' AND NOT cordoned AND instance_id IS NULL
            ORDER BY seq DESC LIMIT $2 FOR UPDATE SKIP LOCKED""")
        .execute(Tuple.of(shape, surplus))
        .compose(rows -> {
          Future<Void> chain = Future.succeededFuture();
          for (Row r : rows) {
            chain = chain.compose(x -> Transitions.machine(tx, r.getString("id"), MachineState.WARM,
                MachineState.STANDBY, "pool above maxWarm").mapEmpty());
          }
          return chain;
        });
  }

  private Future<Void> recordDeficit(SqlConnection tx, Row pool, int deficit) {
    String shape = pool.getString("shape");
    metrics.poolDeficit(shape, deficit);
    if (pool.getInteger("deficit") == deficit) {
      return Future.succeededFuture();
    }
    JsonObject details = new JsonObject().put("minWarm", pool.getInteger("min_warm")).put("deficit", deficit);
    return tx.preparedQuery("UPDATE pools SET deficit = $2 WHERE shape = $1").execute(Tuple.of(shape, deficit))
        .compose(x -> Transitions.note(tx, deficit > 0 ? "PoolDeficit" : "PoolSatisfied", shape, null,
            deficit > 0 ? deficit + " machine(s) short of minWarm with none left to prepare" : "minWarm reachable",
            details));
  }

  /** Machines per shape and state for the metrics endpoint. */
  private Future<Void> publishCounts() {
    return db.query("SELECT shape, state, count(*) AS n FROM machines GROUP BY shape, state").execute()
        .map(rows -> {
          Map<String, Map<String, Long>> counts = new HashMap<>();
          rows.forEach(r -> counts.computeIfAbsent(r.getString("shape"), s -> new HashMap<>())
              .put(r.getString("state"), r.getLong("n")));
          metrics.machineCounts(counts);
          return null;
        });
  }
}
