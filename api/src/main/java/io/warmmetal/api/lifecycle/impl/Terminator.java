package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.lifecycle.Caller;
import io.warmmetal.api.lifecycle.Committed;
import io.warmmetal.api.lifecycle.Instance;
import io.warmmetal.api.lifecycle.InstanceState;
import io.warmmetal.api.lifecycle.Lookups;
import io.warmmetal.api.lifecycle.MachineState;
import io.warmmetal.api.lifecycle.Refusal;
import java.util.EnumSet;
import java.util.List;

/**
 * Terminating an instance: its unfinished commands are cancelled, the instance goes {@code
 * shutting-down} and its machine {@code resetting} with a {@code reset} command queued; the reset's
 * result finishes both. Locks the machine before the instance, the order every transaction here
 * takes, so terminations never deadlock with results.
 */
final class Terminator {
  private static final EnumSet<MachineState> RESETTABLE =
      EnumSet.of(
          MachineState.JOINING,
          MachineState.IN_USE,
          MachineState.PRE_JOINED,
          MachineState.PREPARING);

  private final Pool db;
  private final Commits commits;

  Terminator(Pool db, Commits commits) {
    this.db = db;
    this.commits = commits;
  }

  Future<Instance> terminate(String instanceId, Caller caller) {
    return Tx.run(
            db,
            tx ->
                tx.preparedQuery("SELECT machine_id, project FROM instances WHERE id = $1")
                    .execute(Tuple.of(instanceId))
                    .compose(
                        rows -> {
                          if (rows.size() == 0
                              || !caller.reaches(rows.iterator().next().getString("project"))) {
                            throw Refusal.notFound(
                                "instance",
                                instanceId); // another project's: as if it did not exist
                          }
                          String machineId = rows.iterator().next().getString("machine_id");
                          return Registrar.lock(tx, machineId)
                              .compose(
                                  machine ->
                                      lockInstance(tx, instanceId)
                                          .compose(
                                              instance ->
                                                  apply(
                                                      tx,
                                                      instanceId,
                                                      machineId,
                                                      machine,
                                                      instance,
                                                      caller)));
                        })
                    .compose(x -> Lookups.instance(tx, instanceId)))
        .onSuccess(
            instance ->
                commits.publish(Committed.poolsMoved(List.of(instance.machineId())))); // its reset
  }

  private static Future<Row> lockInstance(SqlConnection tx, String instanceId) {
    return tx.preparedQuery("SELECT state FROM instances WHERE id = $1 FOR UPDATE")
        .execute(Tuple.of(instanceId))
        .map(rows -> rows.iterator().next());
  }

  private static Future<?> apply(
      SqlConnection tx,
      String instanceId,
      String machineId,
      Row machine,
      Row instance,
      Caller caller) {
    InstanceState state = InstanceState.fromWire(instance.getString("state"));
    MachineState machineState = MachineState.fromWire(machine.getString("state"));
    String reason = "terminated by " + caller.name();
    switch (state) {
      case TERMINATED, SHUTTING_DOWN:
        return Future.succeededFuture(); // already on its way: terminating is idempotent
      case FAILED:
        // The machine stays quarantined for an operator; it only lets go of the instance.
        return Transitions.instance(tx, instanceId, state, InstanceState.TERMINATED, reason)
            .compose(x -> release(tx, machineId, instanceId));
      default:
        boolean carries = instanceId.equals(machine.getString("instance_id"));
        if (carries
            && machineState == MachineState.OFFLINE
            && machine.getString("offline_from") != null
            && RESETTABLE.contains(MachineState.fromWire(machine.getString("offline_from")))) {
          return resetWhenBack(tx, instanceId, machineId, state, reason);
        }
        if (!carries || !RESETTABLE.contains(machineState)) {
          return Transitions.cancelInstanceCommands(tx, instanceId, reason)
              .compose(
                  x ->
                      Transitions.instance(
                          tx, instanceId, state, InstanceState.SHUTTING_DOWN, reason))
              .compose(
                  x ->
                      Transitions.instance(
                          tx,
                          instanceId,
                          InstanceState.SHUTTING_DOWN,
                          InstanceState.TERMINATED,
                          reason + "; machine " + machineState.wire() + ", not reset"))
              .compose(x -> release(tx, machineId, instanceId));
        }
        // The reset supersedes whatever the machine had queued (its join, or a prepare still
        // running).
        return Transitions.cancelMachineCommands(tx, machineId, reason)
            .compose(
                x ->
                    Transitions.instance(
                        tx, instanceId, state, InstanceState.SHUTTING_DOWN, reason))
            .compose(
                x ->
                    Transitions.machine(
                        tx, machineId, machineState, MachineState.RESETTING, reason))
            .compose(x -> Transitions.enqueue(tx, machineId, instanceId, "reset"));
    }
  }

  /**
   * The instance's machine is out of contact: nothing can drain or reset it now, so the instance
   * ends at once — and the machine, which its agent left joined (or joining, or preparing for it),
   * is reset when the agent is back: it comes back {@code resetting} with a reset queued, instead
   * of {@code in-use} with nothing on it, which nothing would ever reset (nor could retire or
   * reboot).
   */
  private static Future<?> resetWhenBack(
      SqlConnection tx, String instanceId, String machineId, InstanceState state, String reason) {
    return Transitions.cancelMachineCommands(tx, machineId, reason)
        .compose(
            x -> Transitions.instance(tx, instanceId, state, InstanceState.SHUTTING_DOWN, reason))
        .compose(
            x ->
                Transitions.instance(
                    tx,
                    instanceId,
                    InstanceState.SHUTTING_DOWN,
                    InstanceState.TERMINATED,
                    reason + "; machine offline, reset when it is back"))
        .compose(x -> release(tx, machineId, instanceId))
        .compose(
            x ->
                tx.preparedQuery("UPDATE machines SET offline_from = $2 WHERE id = $1")
                    .execute(Tuple.of(machineId, MachineState.RESETTING.wire())))
        .compose(x -> Transitions.enqueue(tx, machineId, null, "reset"));
  }

  /** Detaches a finished instance from its machine. */
  static Future<Void> release(SqlConnection tx, String machineId, String instanceId) {
    return tx.preparedQuery(
            "UPDATE machines SET instance_id = NULL WHERE id = $1 AND instance_id = $2")
        .execute(Tuple.of(machineId, instanceId))
        .mapEmpty();
  }
}
