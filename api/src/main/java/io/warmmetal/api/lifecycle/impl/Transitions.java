package io.warmmetal.api.lifecycle.impl;

import static io.warmmetal.api.lifecycle.MachineState.*;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.Ids;
import io.warmmetal.api.lifecycle.InstanceState;
import io.warmmetal.api.lifecycle.MachineState;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The state machines, written down once, and the only SQL that changes a machine's or an instance's
 * state. Every change is guarded by the state it expects ({@code WHERE state = from}) and recorded
 * as an event in the same statement.
 */
final class Transitions {
  private static final Map<MachineState, Set<MachineState>> MACHINE =
      new EnumMap<>(MachineState.class);

  static {
    // Every state without an instance may go back to enrolling: its hardware enrolled again, having
    // restarted
    // without its state (a network-booted server keeps nothing).
    MACHINE.put(ENROLLING, EnumSet.of(NEW, PREPARING, STANDBY, WARM, FAILED, OFFLINE, RETIRED));
    // New hardware waits for an operator: accepted (standby, where its pool prepares it) or
    // rejected (retired). It
    // never runs a command, so it never fails, reboots or is prepared from here.
    MACHINE.put(NEW, EnumSet.of(STANDBY, ENROLLING, OFFLINE, RETIRED));
    MACHINE.put(
        PREPARING,
        EnumSet.of(
            WARM, JOINING, RESETTING, STANDBY, REBOOTING, ENROLLING, FAILED, OFFLINE, RETIRED));
    MACHINE.put(
        WARM,
        EnumSet.of(JOINING, STANDBY, PREPARING, REBOOTING, ENROLLING, FAILED, OFFLINE, RETIRED));
    // A standby instance's join leaves its machine pre-joined: a launch that allows it takes the
    // machine without a join (pre-joined → in-use, in the launch function); terminating the standby
    // instance resets it as any other.
    MACHINE.put(JOINING, EnumSet.of(IN_USE, PRE_JOINED, RESETTING, FAILED, OFFLINE));
    MACHINE.put(IN_USE, EnumSet.of(RESETTING, FAILED, OFFLINE));
    MACHINE.put(PRE_JOINED, EnumSet.of(IN_USE, RESETTING, FAILED, OFFLINE));
    MACHINE.put(RESETTING, EnumSet.of(PREPARING, FAILED, OFFLINE));
    MACHINE.put(
        STANDBY, EnumSet.of(PREPARING, WARM, REBOOTING, ENROLLING, FAILED, OFFLINE, RETIRED));
    MACHINE.put(REBOOTING, EnumSet.of(ENROLLING, STANDBY, FAILED, OFFLINE, RETIRED));
    MACHINE.put(
        OFFLINE,
        EnumSet.of(
            NEW,
            PREPARING,
            WARM,
            STANDBY,
            JOINING,
            IN_USE,
            PRE_JOINED,
            RESETTING,
            REBOOTING,
            ENROLLING,
            FAILED,
            RETIRED));
    MACHINE.put(FAILED, EnumSet.of(PREPARING, STANDBY, REBOOTING, RETIRED));
    MACHINE.put(RETIRED, EnumSet.noneOf(MachineState.class));
  }

  private static final Map<InstanceState, Set<InstanceState>> INSTANCE =
      Map.of(
          InstanceState.PENDING,
              EnumSet.of(InstanceState.RUNNING, InstanceState.SHUTTING_DOWN, InstanceState.FAILED),
          // running → terminated: a standby instance handed its pre-joined machine to a launch
          // (in the launch function); the machine stays joined, so there is nothing to shut down.
          InstanceState.RUNNING,
              EnumSet.of(
                  InstanceState.SHUTTING_DOWN, InstanceState.TERMINATED, InstanceState.FAILED),
          InstanceState.SHUTTING_DOWN, EnumSet.of(InstanceState.TERMINATED),
          InstanceState.FAILED, EnumSet.of(InstanceState.TERMINATED),
          InstanceState.TERMINATED, EnumSet.noneOf(InstanceState.class));

  /** The states a machine may go offline from, as the state machine above says. */
  private static final String[] MAY_GO_OFFLINE =
      MACHINE.entrySet().stream()
          .filter(e -> e.getValue().contains(OFFLINE))
          .map(e -> e.getKey().wire())
          .toArray(String[]::new);

  private Transitions() {}

  static boolean allowed(MachineState from, MachineState to) {
    return MACHINE.get(from).contains(to);
  }

  static boolean allowed(InstanceState from, InstanceState to) {
    return INSTANCE.get(from).contains(to);
  }

  /** Moves a machine from {@code from} to {@code to}; false if it was no longer in {@code from}. */
  static Future<Boolean> machine(
      SqlConnection tx, String machineId, MachineState from, MachineState to, String reason) {
    if (!allowed(from, to)) {
      throw new IllegalStateException(
          "machine " + from.wire() + " → " + to.wire() + " is not a transition");
    }
    return tx.preparedQuery(
            """
            WITH m AS (
              UPDATE machines SET state = $3, state_changed_at = now() WHERE id = $1 AND state = $2
              RETURNING id, instance_id)
            INSERT INTO events (type, subject, machine_id, instance_id, from_state, to_state, reason)
            SELECT 'MachineState', id, id, instance_id, $2, $3, $4 FROM m RETURNING seq""")
        .execute(Tuple.of(machineId, from.wire(), to.wire(), reason))
        .map(rows -> rows.size() == 1);
  }

  /**
   * Takes machines offline together, each from whatever state it is in (remembered in {@code
   * offline_from}, where its agent's return brings it back), its instance told why; one statement
   * for them all. Machines in a state that does not go offline are left. Answers how many went.
   */
  static Future<Integer> machinesOffline(SqlConnection tx, List<String> machineIds, String reason) {
    return tx.preparedQuery(
            """
            WITH m AS (
              UPDATE machines SET offline_from = state, state = 'offline', state_changed_at = now()
              WHERE id = ANY($1) AND state = ANY($2)
              RETURNING id, instance_id, offline_from),
            e AS (
              INSERT INTO events (type, subject, machine_id, instance_id, from_state, to_state, reason)
              SELECT 'MachineState', id, id, instance_id, offline_from, 'offline', $3 FROM m),
            i AS (
              UPDATE instances SET state_reason = 'machine offline'
              WHERE id IN (SELECT instance_id FROM m) AND state IN ('pending', 'running'))
            SELECT count(*) FROM m""")
        .execute(Tuple.of(machineIds.toArray(String[]::new), MAY_GO_OFFLINE, reason))
        .map(rows -> rows.iterator().next().getInteger(0));
  }

  /**
   * Moves an instance from {@code from} to {@code to}, stamping running/terminated times; sealed
   * secrets are dropped as soon as it leaves pending (they are only needed to join).
   */
  static Future<Boolean> instance(
      SqlConnection tx, String instanceId, InstanceState from, InstanceState to, String reason) {
    if (!allowed(from, to)) {
      throw new IllegalStateException(
          "instance " + from.wire() + " → " + to.wire() + " is not a transition");
    }
    return tx.preparedQuery(
            """
            WITH i AS (
              UPDATE instances SET state = $3, state_reason = $4,
                running_at = CASE WHEN $3 = 'running' THEN now() ELSE running_at END,
                terminated_at = CASE WHEN $3 = 'terminated' THEN now() ELSE terminated_at END,
                secrets = CASE WHEN $3 = 'pending' THEN secrets END
              WHERE id = $1 AND state = $2
              RETURNING id, machine_id)
            INSERT INTO events (type, subject, machine_id, instance_id, from_state, to_state, reason)
            SELECT 'InstanceState', id, machine_id, id, $2, $3, $4 FROM i RETURNING seq""")
        .execute(Tuple.of(instanceId, from.wire(), to.wire(), reason))
        .map(rows -> rows.size() == 1);
  }

  /** Queues a command for a machine's agent, in order after its earlier commands. */
  static Future<String> enqueue(
      SqlConnection tx, String machineId, String instanceId, String type) {
    String id = Ids.commandId();
    return tx.preparedQuery(
            """
            WITH c AS (
              INSERT INTO commands (id, machine_id, instance_id, type, status) VALUES ($1, $2, $3, $4, 'queued')
              RETURNING id)
            INSERT INTO events (type, subject, machine_id, instance_id, to_state, reason)
            SELECT 'CommandQueued', id, $2, $3, 'queued', $4 FROM c""")
        .execute(Tuple.of(id, machineId, instanceId, type))
        .map(id);
  }

  /** Cancels an instance's unfinished commands (a terminated instance must not join later). */
  static Future<Integer> cancelInstanceCommands(
      SqlConnection tx, String instanceId, String reason) {
    return cancelOpenCommands(tx, "instance_id", instanceId, reason);
  }

  /** Cancels a machine's unfinished commands (a retired machine runs nothing more). */
  static Future<Integer> cancelMachineCommands(SqlConnection tx, String machineId, String reason) {
    return cancelOpenCommands(tx, "machine_id", machineId, reason);
  }

  private static Future<Integer> cancelOpenCommands(
      SqlConnection tx, String column, String id, String reason) {
    return tx.preparedQuery(
            """
            WITH c AS (
              UPDATE commands SET status = 'cancelled', message = $2, finished_at = now()
              WHERE %s = $1 AND status IN ('queued', 'delivered')
              RETURNING id, machine_id, instance_id)
            INSERT INTO events (type, subject, machine_id, instance_id, to_state, reason)
            SELECT 'CommandResult', id, machine_id, instance_id, 'cancelled', $2 FROM c"""
                .formatted(column))
        .execute(Tuple.of(id, reason))
        .map(rows -> rows.rowCount());
  }

  /** Records a machine's first state. */
  static Future<Void> machineCreated(
      SqlConnection tx, String machineId, MachineState state, String reason) {
    return tx.preparedQuery(
            """
            INSERT INTO events (type, subject, machine_id, to_state, reason)
            VALUES ('MachineState', $1, $1, $2, $3)""")
        .execute(Tuple.of(machineId, state.wire(), reason))
        .mapEmpty();
  }

  /** Records an event that is not a state change (a cordon, a pool deficit). */
  static Future<Void> note(
      SqlConnection tx,
      String type,
      String subject,
      String machineId,
      String reason,
      JsonObject details) {
    return tx.preparedQuery(
            "INSERT INTO events (type, subject, machine_id, reason, details) VALUES ($1, $2, $3, $4, $5)")
        .execute(Tuple.of(type, subject, machineId, reason, details))
        .mapEmpty();
  }
}
