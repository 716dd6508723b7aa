package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.lifecycle.Command;
import io.warmmetal.api.lifecycle.Committed;
import io.warmmetal.api.lifecycle.InstanceState;
import io.warmmetal.api.lifecycle.MachineState;
import io.warmmetal.api.lifecycle.Refusal;
import io.warmmetal.api.lifecycle.Refusal.Reason;
import java.util.List;

/**
 * A command's outcome drives the next transition:
 *
 * <ul>
 *   <li>prepare: {@code preparing → warm} (or {@code → joining} if a launch already claimed the
 *       machine); failed: the machine is quarantined and a claiming instance fails
 *   <li>join: {@code joining → in-use} ({@code → pre-joined} for a standby instance), instance
 *       {@code pending → running}; failed: both fail
 *   <li>reset: {@code resetting → preparing} with a new prepare queued, instance {@code →
 *       terminated}; failed: the machine is quarantined, the instance still terminates
 *   <li>reboot: the machine stays {@code rebooting} until it enrolls again or its agent reconnects;
 *       failed: it is quarantined
 * </ul>
 *
 * Results come in the order the machine runs its commands: a result that would overtake an earlier
 * open command is refused. A result that arrives when the machine has moved on is recorded and
 * changes nothing.
 */
final class CommandResults {
  private final Pool db;
  private final Commits commits;

  CommandResults(Pool db, Commits commits) {
    this.db = db;
    this.commits = commits;
  }

  /** An agent reporting: its machine, and the serial of the certificate it speaks with. */
  record Reporter(String machineId, String certSerial) {}

  /** Reports a result; {@code reporter}, if not null, is the agent that reports it. */
  Future<Command> report(String commandId, Reporter reporter, boolean succeeded, String message) {
    String status = succeeded ? "succeeded" : "failed";
    return Tx.run(
            db,
            tx ->
                tx.preparedQuery("SELECT machine_id FROM commands WHERE id = $1")
                    .execute(Tuple.of(commandId))
                    .compose(
                        rows -> {
                          if (rows.size() == 0) {
                            throw Refusal.notFound("command", commandId);
                          }
                          String machineId = rows.iterator().next().getString("machine_id");
                          if (reporter != null && !reporter.machineId().equals(machineId)) {
                            throw Refusal.of(
                                Reason.Forbidden,
                                "command "
                                    + commandId
                                    + " is not machine "
                                    + reporter.machineId()
                                    + "'s");
                          }
                          return Registrar.lock(tx, machineId)
                              .compose(
                                  machine -> {
                                    if (reporter != null
                                        && !reporter
                                            .certSerial()
                                            .equals(machine.getString("cert_serial"))) {
                                      throw Refusal.of(
                                          Reason.Forbidden,
                                          "the certificate reporting is no longer machine "
                                              + machineId
                                              + "'s");
                                    }
                                    return lockCommand(tx, commandId)
                                        .compose(
                                            command ->
                                                record(tx, command, status, message)
                                                    .compose(
                                                        changed ->
                                                            changed
                                                                ? transition(
                                                                    tx, command, machine, succeeded,
                                                                    message)
                                                                : Future.succeededFuture()));
                                  });
                        })
                    .compose(
                        x ->
                            tx.preparedQuery("SELECT * FROM commands WHERE id = $1")
                                .execute(Tuple.of(commandId)))
                    .map(rows -> Command.from(rows.iterator().next())))
        .onSuccess(
            command -> {
              if ("reset".equals(command.type()) && "succeeded".equals(command.status())) {
                commits.publish(
                    Committed.commands(
                        List.of(command.machineId()))); // a reset is followed by a prepare
              }
            });
  }

  private static Future<Row> lockCommand(SqlConnection tx, String commandId) {
    return tx.preparedQuery("SELECT * FROM commands WHERE id = $1 FOR UPDATE")
        .execute(Tuple.of(commandId))
        .map(rows -> rows.iterator().next());
  }

  /** Stores the outcome; false if this very outcome was already stored (a repeated report). */
  private static Future<Boolean> record(
      SqlConnection tx, Row command, String status, String message) {
    String current = command.getString("status");
    String id = command.getString("id");
    if (current.equals(status)) {
      return Future.succeededFuture(false);
    }
    if (current.equals("succeeded") || current.equals("failed")) {
      throw Refusal.of(Reason.Conflict, "command " + id + " already " + current);
    }
    if (current.equals("cancelled")) {
      throw Refusal.of(Reason.InvalidState, "command " + id + " was cancelled");
    }
    // A machine runs its commands in order: a result cannot overtake an earlier command that is
    // still open.
    return tx.preparedQuery(
            """
            SELECT id FROM commands WHERE machine_id = $1 AND seq < $2 AND status IN ('queued', 'delivered')
            ORDER BY seq LIMIT 1""")
        .execute(Tuple.of(command.getString("machine_id"), command.getLong("seq")))
        .compose(
            earlier -> {
              if (earlier.size() > 0) {
                throw new Refusal(
                    Reason.EarlierCommandOpen,
                    "command "
                        + earlier.iterator().next().getString("id")
                        + ", queued before "
                        + id
                        + ", has not finished",
                    null,
                    new JsonObject().put("retry", true));
              }
              return store(tx, id, status, message);
            });
  }

  private static Future<Boolean> store(SqlConnection tx, String id, String status, String message) {
    return tx.preparedQuery(
            """
            WITH c AS (
              UPDATE commands SET status = $2, message = $3, finished_at = now() WHERE id = $1
              RETURNING id, machine_id, instance_id, type)
            INSERT INTO events (type, subject, machine_id, instance_id, to_state, reason)
            SELECT 'CommandResult', id, machine_id, instance_id, $2, type || coalesce(': ' || $3, '') FROM c""")
        .execute(Tuple.of(id, status, message))
        .map(true);
  }

  private static Future<Void> transition(
      SqlConnection tx, Row command, Row machine, boolean ok, String message) {
    MachineState current = MachineState.fromWire(machine.getString("state"));
    // An offline machine is judged by where it was: a join that times out while its agent is gone
    // still fails.
    MachineState effective =
        current == MachineState.OFFLINE && machine.getString("offline_from") != null
            ? MachineState.fromWire(machine.getString("offline_from"))
            : current;
    Outcome o =
        new Outcome(
            tx,
            command.getString("machine_id"),
            command.getString("instance_id"),
            machine.getString("instance_id"),
            effective,
            current,
            ok,
            message == null ? "" : ": " + message);
    return switch (command.getString("type")) {
      case "prepare" -> o.state == MachineState.PREPARING ? prepared(o) : done();
      case "join" ->
          o.state == MachineState.JOINING && o.instanceId.equals(o.claimedBy) ? joined(o) : done();
      case "reset" -> o.state == MachineState.RESETTING ? reset(o) : done();
      case "reboot" ->
          o.state == MachineState.REBOOTING && !o.ok
              ? Transitions.machine(
                      o.tx, o.machineId, o.current, MachineState.FAILED, "reboot failed" + o.why)
                  .mapEmpty()
              : done();
      default -> done();
    };
  }

  /**
   * What a result is about: the command's machine and instance, the state the machine is judged by
   * ({@code state}) and the one it is in ({@code current}: differs only while offline).
   */
  private record Outcome(
      SqlConnection tx,
      String machineId,
      String instanceId,
      String claimedBy,
      MachineState state,
      MachineState current,
      boolean ok,
      String why) {}

  private static Future<Void> prepared(Outcome o) {
    if (o.ok) {
      return Transitions.machine(
              o.tx,
              o.machineId,
              o.current,
              o.claimedBy == null ? MachineState.WARM : MachineState.JOINING,
              "prepared")
          .mapEmpty();
    }
    return Transitions.machine(
            o.tx, o.machineId, o.current, MachineState.FAILED, "prepare failed" + o.why)
        .compose(
            x ->
                o.claimedBy == null
                    ? done()
                    : failInstance(o.tx, o.claimedBy, "prepare failed" + o.why));
  }

  private static Future<Void> joined(Outcome o) {
    if (o.ok) {
      // A standby instance's machine waits joined for a launch that takes it without a join.
      return o.tx
          .preparedQuery("SELECT standby FROM instances WHERE id = $1")
          .execute(Tuple.of(o.instanceId))
          .compose(
              rows ->
                  rows.iterator().next().getBoolean("standby")
                      ? Transitions.machine(
                          o.tx,
                          o.machineId,
                          o.current,
                          MachineState.PRE_JOINED,
                          "joined as standby")
                      : Transitions.machine(
                          o.tx, o.machineId, o.current, MachineState.IN_USE, "joined"))
          .compose(
              x ->
                  Transitions.instance(
                      o.tx, o.instanceId, InstanceState.PENDING, InstanceState.RUNNING, "joined"))
          .mapEmpty();
    }
    return Transitions.machine(
            o.tx, o.machineId, o.current, MachineState.FAILED, "join failed" + o.why)
        .compose(x -> failInstance(o.tx, o.instanceId, "join failed" + o.why));
  }

  private static Future<Void> reset(Outcome o) {
    Future<?> machine =
        o.ok
            ? Transitions.machine(o.tx, o.machineId, o.current, MachineState.PREPARING, "reset")
                .compose(x -> Transitions.enqueue(o.tx, o.machineId, null, "prepare"))
            : Transitions.machine(
                o.tx, o.machineId, o.current, MachineState.FAILED, "reset failed" + o.why);
    if (o.instanceId == null) {
      return machine.mapEmpty();
    }
    return machine
        .compose(
            x ->
                Transitions.instance(
                    o.tx,
                    o.instanceId,
                    InstanceState.SHUTTING_DOWN,
                    InstanceState.TERMINATED,
                    o.ok ? "machine reset" : "machine reset failed and is quarantined"))
        .compose(x -> Terminator.release(o.tx, o.machineId, o.instanceId));
  }

  private static Future<Void> failInstance(SqlConnection tx, String instanceId, String reason) {
    return Transitions.cancelInstanceCommands(tx, instanceId, reason)
        .compose(
            x ->
                Transitions.instance(
                    tx, instanceId, InstanceState.PENDING, InstanceState.FAILED, reason))
        .mapEmpty();
  }

  private static Future<Void> done() {
    return Future.succeededFuture();
  }
}
