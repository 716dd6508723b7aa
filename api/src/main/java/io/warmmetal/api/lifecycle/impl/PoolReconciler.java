package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.lifecycle.Committed;
import io.warmmetal.api.lifecycle.MachineState;
import io.warmmetal.api.lifecycle.PoolDecisions;
import io.warmmetal.api.lifecycle.PoolDecisions.Deficit;
import io.warmmetal.api.lifecycle.PoolPlanner;
import io.warmmetal.api.lifecycle.PoolSnapshot;
import io.warmmetal.api.lifecycle.PoolSnapshot.Member;
import io.warmmetal.api.lifecycle.PoolSnapshot.Target;
import io.warmmetal.api.metrics.FleetMetrics;
import java.util.ArrayList;
import java.util.List;

/**
 * One pool pass: snapshot, let {@link PoolPlanner} decide, apply the state part. All in one
 * transaction holding an advisory lock, so that with many API replicas passes run one after another
 * and each sees what the previous one did. Every move is guarded by the state the snapshot saw: a
 * machine a launch claimed meanwhile is left alone.
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

  Future<PoolDecisions> reconcile() {
    List<String> prepared = new ArrayList<>();
    return Tx.run(
            db,
            tx -> {
              prepared.clear(); // a retried transaction starts over
              return tx.preparedQuery("SELECT pg_advisory_xact_lock($1)")
                  .execute(Tuple.of(LOCK_KEY))
                  .compose(locked -> snapshot(tx))
                  .map(PoolPlanner::decide)
                  .compose(decisions -> apply(tx, decisions, prepared).map(decisions));
            })
        .onSuccess(
            decisions -> {
              decisions.deficits().forEach(d -> metrics.poolDeficit(d.shape(), d.deficit()));
              commits.publish(Committed.commands(List.copyOf(prepared)));
            });
  }

  private static Future<PoolSnapshot> snapshot(SqlConnection tx) {
    return tx.query("SELECT shape, min_warm, max_warm, deficit, image FROM pools ORDER BY shape")
        .execute()
        .compose(
            pools -> {
              List<Target> targets = new ArrayList<>();
              pools.forEach(
                  r ->
                      targets.add(
                          new Target(
                              r.getString("shape"),
                              r.getInteger("min_warm"),
                              r.getInteger("max_warm"),
                              r.getInteger("deficit"),
                              r.getString("image"))));
              // Two index-driven halves rather than one OR over every machine: the pools' free
              // members (the
              // claimable index, by shape) and the machines the API switches (machine_power).
              String[] pooled = targets.stream().map(Target::shape).toArray(String[]::new);
              return tx.preparedQuery(
                      """
                  SELECT m.id, m.shape, m.state, true AS free,
                         EXISTS (SELECT 1 FROM machine_power p WHERE p.machine_id = m.id) AS power_control,
                         coalesce(m.power_state = 'off', false) AS switched_off, m.seq,
                         m.facts -> 'image' ->> 'version' AS image
                  FROM machines m
                  WHERE m.shape = ANY ($1) AND m.state IN ('warm', 'preparing', 'standby', 'rebooting')
                    AND NOT m.cordoned AND m.instance_id IS NULL
                  UNION
                  SELECT m.id, m.shape, m.state, NOT m.cordoned AND m.instance_id IS NULL AS free,
                         true AS power_control, coalesce(m.power_state = 'off', false) AS switched_off, m.seq,
                         m.facts -> 'image' ->> 'version' AS image
                  FROM machine_power p JOIN machines m ON m.id = p.machine_id
                  WHERE m.state IN ('standby', 'preparing', 'warm', 'joining', 'in-use', 'pre-joined', 'resetting')
                  ORDER BY seq""")
                  .execute(Tuple.tuple().addArrayOfString(pooled))
                  .map(
                      rows -> {
                        List<Member> members = new ArrayList<>();
                        rows.forEach(
                            r ->
                                members.add(
                                    new Member(
                                        r.getString("id"),
                                        r.getString("shape"),
                                        MachineState.fromWire(r.getString("state")),
                                        r.getBoolean("free"),
                                        r.getBoolean("power_control"),
                                        r.getBoolean("switched_off"),
                                        r.getString("image"))));
                        return new PoolSnapshot(targets, members);
                      });
            });
  }

  private static Future<Void> apply(
      SqlConnection tx, PoolDecisions decisions, List<String> prepared) {
    Future<Void> chain = Future.succeededFuture();
    for (String id : decisions.prepare()) {
      chain =
          chain
              .compose(
                  x ->
                      Transitions.machine(
                          tx,
                          id,
                          MachineState.STANDBY,
                          MachineState.PREPARING,
                          "pool below minWarm"))
              .compose(
                  moved -> {
                    if (!moved) {
                      return Future.succeededFuture(); // claimed since the snapshot
                    }
                    prepared.add(id);
                    return Transitions.enqueue(tx, id, null, "prepare").mapEmpty();
                  });
    }
    for (PoolDecisions.Reboot r : decisions.reboot()) {
      chain =
          chain
              .compose(
                  x ->
                      Registrar.rebootFrom(
                          tx,
                          r.machineId(),
                          r.from(),
                          "rebooting into image " + r.image() + ", its pool's"))
              .compose(
                  moved -> {
                    if (moved) {
                      prepared.add(r.machineId()); // its reboot is announced like a prepare
                    }
                    return Future.succeededFuture();
                  });
    }
    for (String id : decisions.park()) {
      chain =
          chain.compose(
              x ->
                  Transitions.machine(
                          tx, id, MachineState.WARM, MachineState.STANDBY, "pool above maxWarm")
                      .mapEmpty());
    }
    for (Deficit d : decisions.deficits()) {
      if (d.changed()) {
        chain = chain.compose(x -> recordDeficit(tx, d));
      }
    }
    return chain;
  }

  private static Future<Void> recordDeficit(SqlConnection tx, Deficit d) {
    JsonObject details = new JsonObject().put("minWarm", d.minWarm()).put("deficit", d.deficit());
    return tx.preparedQuery("UPDATE pools SET deficit = $2 WHERE shape = $1")
        .execute(Tuple.of(d.shape(), d.deficit()))
        .compose(
            x ->
                Transitions.note(
                    tx,
                    d.deficit() > 0 ? "PoolDeficit" : "PoolSatisfied",
                    d.shape(),
                    null,
                    d.deficit() > 0
                        ? d.deficit() + " machine(s) short of minWarm with none left to prepare"
                        : "minWarm reachable",
                    details));
  }
}
