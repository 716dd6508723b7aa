package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.lifecycle.Committed;
import io.warmmetal.api.lifecycle.MachineState;
import io.warmmetal.api.lifecycle.Refusal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Whether a machine's agent is there — the one owner of presence: the only writer of {@code
 * machines.last_seen} and the one that decides online and offline. Hellos bring machines in (or
 * back), the channel's periodic "heard these" keeps them there, silence takes them {@code offline},
 * and a join that never reports fails after a timeout. Every replica runs the sweeps; each change
 * is guarded by the state it expects, so two replicas sweeping at once do it once.
 */
final class AgentPresence {
  static final int OFFLINE_BATCH = 200;
  private final Pool db;
  private final Commits commits;

  AgentPresence(Pool db, Commits commits) {
    this.db = db;
    this.commits = commits;
  }

  /**
   * The agent holding {@code certSerial} said hello; refused ({@code Forbidden}) if that is no
   * longer the machine's certificate. A machine that came into the fleet (or back) may be what a
   * pool waits for.
   */
  Future<Void> connected(String machineId, String certSerial) {
    return Tx.<Void>run(
            db,
            tx ->
                Registrar.lock(tx, machineId)
                    .compose(
                        m -> {
                          if (!certSerial.equals(m.getString("cert_serial"))) {
                            throw Refusal.of(
                                Refusal.Reason.Forbidden,
                                "certificate "
                                    + certSerial
                                    + " is no longer machine "
                                    + machineId
                                    + "'s");
                          }
                          MachineState state = MachineState.fromWire(m.getString("state"));
                          Future<?> touched =
                              tx.preparedQuery(
                                      "UPDATE machines SET last_seen = now() WHERE id = $1")
                                  .execute(Tuple.of(machineId));
                          boolean admitted = m.getBoolean("admitted");
                          if (state == MachineState.ENROLLING) {
                            // New hardware nobody vouched for waits for an operator; everything
                            // else is the pools' to prepare.
                            return touched
                                .compose(
                                    x ->
                                        admitted
                                            ? Transitions.machine(
                                                tx,
                                                machineId,
                                                state,
                                                MachineState.STANDBY,
                                                "agent connected")
                                            : Transitions.machine(
                                                tx,
                                                machineId,
                                                state,
                                                MachineState.NEW,
                                                "agent connected: new hardware, waiting for an operator to accept it"))
                                .mapEmpty();
                          }
                          if (state == MachineState.REBOOTING) {
                            // An agent that keeps its identity across reboots (installed on a disk)
                            // says hello again once it has run
                            // the reboot; until its result is in, a hello is the old session
                            // reconnecting before going down.
                            return touched
                                .compose(
                                    x ->
                                        tx.preparedQuery(
                                                """
                    SELECT 1 FROM commands WHERE machine_id = $1 AND type = 'reboot' AND status = 'succeeded'
                      AND finished_at >= (SELECT state_changed_at FROM machines WHERE id = $1)""")
                                            .execute(Tuple.of(machineId)))
                                .compose(
                                    rebooted ->
                                        rebooted.size() == 0
                                            ? Future.succeededFuture()
                                            : Transitions.machine(
                                                tx,
                                                machineId,
                                                state,
                                                MachineState.STANDBY,
                                                "agent back after the reboot"))
                                .mapEmpty();
                          }
                          if (state != MachineState.OFFLINE) {
                            return touched.mapEmpty();
                          }
                          return touched
                              .compose(
                                  x ->
                                      tx.preparedQuery(
                                              "SELECT offline_from FROM machines WHERE id = $1")
                                          .execute(Tuple.of(machineId)))
                              .compose(
                                  rows -> {
                                    String from = rows.iterator().next().getString("offline_from");
                                    MachineState back =
                                        from == null
                                            ? MachineState.STANDBY
                                            : MachineState.fromWire(from);
                                    if (back == MachineState.NEW && admitted) {
                                      back = MachineState.STANDBY; // accepted while out of contact
                                    }
                                    return Transitions.machine(
                                        tx, machineId, MachineState.OFFLINE, back, "agent back");
                                  })
                              .compose(
                                  x ->
                                      tx.preparedQuery(
                                              """
                  UPDATE instances SET state_reason = NULL
                  WHERE id = (SELECT instance_id FROM machines WHERE id = $1) AND state_reason = 'machine offline'""")
                                          .execute(Tuple.of(machineId)))
                              .mapEmpty();
                        }))
        .onSuccess(x -> commits.publish(Committed.poolsMoved(List.of())));
  }

  /**
   * The agents a replica holds were heard: each machine whose certificate ({@code serials}: machine
   * → serial) is still its current one, and not retired, is seen now; one still offline or
   * enrolling (its hello's change was lost, say in a database outage) comes back as a hello would
   * bring it. Answers the machines whose certificates are current: the others' connections should
   * close. The rows are locked in id order first: two batches sharing machines (two replicas in a
   * handover, each still holding some of the same agents) then wait for each other instead of
   * deadlocking, as they did with the join's order.
   */
  Future<Set<String>> heard(Map<String, String> serials) {
    if (serials.isEmpty()) {
      return Future.succeededFuture(Set.of());
    }
    return db.preparedQuery(
            """
            WITH seen AS (
              SELECT m.id FROM machines m JOIN unnest($1::text[], $2::text[]) AS s(id, serial)
                ON m.id = s.id AND m.cert_serial = s.serial
              WHERE m.state <> 'retired'
              ORDER BY m.id FOR UPDATE OF m)
            UPDATE machines m SET last_seen = now()
            FROM seen WHERE m.id = seen.id
            RETURNING m.id, m.state""")
        .execute(
            Tuple.tuple()
                .addArrayOfString(serials.keySet().toArray(String[]::new))
                .addArrayOfString(serials.values().toArray(String[]::new)))
        .compose(
            rows -> {
              Set<String> current = new HashSet<>();
              Future<Void> chain = Future.succeededFuture();
              for (Row r : rows) {
                String id = r.getString("id");
                current.add(id);
                String state = r.getString("state");
                if (state.equals(MachineState.OFFLINE.wire())
                    || state.equals(MachineState.ENROLLING.wire())) {
                  chain =
                      chain.compose(
                          x ->
                              connected(id, serials.get(id))
                                  .recover(err -> Future.succeededFuture()));
                }
              }
              return chain.map(current);
            });
  }

  /**
   * A step of one of the machine's own commands began; steps of other machines' commands are
   * ignored.
   */
  Future<Void> progress(
      String machineId, String certSerial, String commandId, String step, String message) {
    return db.preparedQuery(
            """
            INSERT INTO events (type, subject, machine_id, instance_id, reason, details)
            SELECT 'CommandProgress', c.id, c.machine_id, c.instance_id, $3, jsonb_build_object('message', $4::text)
            FROM commands c JOIN machines m ON m.id = c.machine_id
            WHERE c.id = $1 AND c.machine_id = $2 AND m.cert_serial = $5""")
        .execute(Tuple.of(commandId, machineId, step, message, certSerial))
        .mapEmpty();
  }

  /**
   * Machines silent past {@code silence} (or past {@code bootGrace} while they boot) go offline, at
   * most {@value #OFFLINE_BATCH} to a transaction and those in one statement: when a whole
   * replica's agents fall silent together, a statement or three per machine in one transaction held
   * every one's row for minutes on a busy database, and each returning agent's hello waited for it
   * with a connection of the pool.
   */
  Future<Integer> markSilentOffline(Duration silence, Duration bootGrace) {
    return markSilentOffline(silence, bootGrace, 0);
  }

  private Future<Integer> markSilentOffline(Duration silence, Duration bootGrace, int before) {
    return markSilentBatch(silence, bootGrace)
        .compose(
            n ->
                n < OFFLINE_BATCH
                    ? Future.succeededFuture(before + n)
                    : markSilentOffline(silence, bootGrace, before + n));
  }

  private Future<Integer> markSilentBatch(Duration silence, Duration bootGrace) {
    return Tx.run(
        db,
        tx ->
            tx.preparedQuery(
                    """
            SELECT id, state, instance_id FROM machines
            -- A quarantined (failed) machine stays failed, heard or not: it waits for an operator.
            WHERE state NOT IN ('offline', 'retired', 'enrolling', 'failed')
              AND CASE
                -- Told to reboot: silence is expected while it boots.
                WHEN state = 'rebooting' THEN state_changed_at < now() - make_interval(secs => $2)
                -- Switched off in standby: silence is expected.
                WHEN power_state = 'off' AND state = 'standby' THEN false
                -- Switched off, then claimed: the power-on and the boot get their time.
                WHEN power_state = 'off' THEN state_changed_at < now() - make_interval(secs => $2)
                -- Switched on and not heard from since: booting.
                WHEN power_state = 'on' AND (last_seen IS NULL OR last_seen < power_changed_at)
                  THEN power_changed_at < now() - make_interval(secs => $2)
                ELSE last_seen < now() - make_interval(secs => $1)
              END
            LIMIT $3
            FOR UPDATE SKIP LOCKED""")
                .execute(
                    Tuple.of(
                        (double) silence.toMillis() / 1000,
                        (double) bootGrace.toMillis() / 1000,
                        OFFLINE_BATCH))
                .compose(
                    rows -> {
                      List<String> silent = new ArrayList<>();
                      rows.forEach(r -> silent.add(r.getString("id")));
                      return silent.isEmpty()
                          ? Future.succeededFuture(0)
                          : Transitions.machinesOffline(
                                  tx, silent, "no heartbeat for " + silence.toSeconds() + " s")
                              .map(silent.size());
                    }));
  }

  Future<Integer> expireJoins(Duration timeout, CommandResults results) {
    // A join's clock starts when it can run: delivered, and its machine done preparing (in
    // joining). One queued
    // behind a long prepare is not timed while the prepare runs.
    return db.preparedQuery(
            """
            SELECT c.id FROM commands c JOIN machines m ON m.id = c.machine_id
            WHERE c.type = 'join' AND c.status = 'delivered'
              AND ((m.state = 'joining'
                    AND greatest(c.delivered_at, m.state_changed_at) < now() - make_interval(secs => $1))
                OR (m.state = 'offline' AND m.offline_from = 'joining'
                    AND c.delivered_at < now() - make_interval(secs => $1)))
            ORDER BY c.seq""")
        .execute(Tuple.of((double) timeout.toMillis() / 1000))
        .compose(
            rows -> {
              Future<Integer> chain = Future.succeededFuture(0);
              for (Row r : rows) {
                chain =
                    chain.compose(
                        n ->
                            results
                                .report(
                                    r.getString("id"),
                                    null,
                                    false,
                                    "no result within " + timeout.toSeconds() + " s")
                                .map(n + 1)
                                .recover(
                                    err ->
                                        Future.succeededFuture(
                                            n))); // reported meanwhile, or overtaken: nothing to do
              }
              return chain;
            });
  }
}
