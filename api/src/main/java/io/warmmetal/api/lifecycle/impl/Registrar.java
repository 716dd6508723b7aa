package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.Ids;
import io.warmmetal.api.lifecycle.Host;
import io.warmmetal.api.lifecycle.Lookups;
import io.warmmetal.api.lifecycle.Machine;
import io.warmmetal.api.lifecycle.MachineState;
import io.warmmetal.api.lifecycle.Refusal;
import io.warmmetal.api.lifecycle.Refusal.Reason;
import io.warmmetal.api.lifecycle.Registration;
import io.warmmetal.api.lifecycle.ShapeNamer;
import java.util.Map;

/** Machines entering and leaving the fleet, and cordons. */
final class Registrar {
  private final Pool db;

  Registrar(Pool db) {
    this.db = db;
  }

  Future<Machine> register(Registration reg) {
    String shape = ShapeNamer.name(reg.host().facts());
    if (shape.length() > ShapeNamer.MAX_LENGTH) {
      return Future.failedFuture(
          Refusal.invalid(
              "facts.gpus",
              "these facts make the shape name '"
                  + shape
                  + "', longer than "
                  + ShapeNamer.MAX_LENGTH
                  + " characters; a machine mixes too many GPU models"));
    }
    String id = Ids.machineId();
    MachineState state = reg.prepared() ? MachineState.WARM : MachineState.STANDBY;
    return Tx.run(
            db,
            tx ->
                insert(tx, id, state, shape, reg.host(), reg.labels(), true)
                    .compose(
                        x ->
                            Transitions.machineCreated(
                                tx,
                                id,
                                state,
                                state == MachineState.WARM
                                    ? "registered as prepared"
                                    : "registered"))
                    .compose(x -> Lookups.machine(tx, id)))
        .recover(err -> Future.failedFuture(duplicateIdentity(err)));
  }

  /**
   * The machine label that says which node image a machine booted (its facts' {@code
   * image.version}), kept by the API — launches select on it ({@code machineLabels}) as on any
   * label.
   */
  static final String IMAGE_LABEL = "warmmetal.io/image";

  /**
   * {@code labels} with {@link #IMAGE_LABEL} set from {@code facts} (or removed if they name no
   * image).
   */
  static JsonObject withImage(JsonObject labels, JsonObject facts) {
    JsonObject all = labels == null ? new JsonObject() : labels.copy();
    all.remove(IMAGE_LABEL);
    String image = imageOf(facts);
    if (image != null) {
      all.put(IMAGE_LABEL, image);
    }
    return all;
  }

  static String imageOf(JsonObject facts) {
    JsonObject image = facts == null ? null : facts.getJsonObject("image");
    return image == null ? null : image.getString("version");
  }

  /** A new machine row (and its shape's, if it is the first of it); no event. */
  static Future<Void> insert(
      SqlConnection tx,
      String id,
      MachineState state,
      String shape,
      Host host,
      JsonObject labels,
      boolean admitted) {
    return upsertShape(tx, shape, host.facts())
        .compose(
            x ->
                tx.preparedQuery(
                        """
                INSERT INTO machines (id, name, state, shape, address, facts, labels, system_uuid, primary_mac,
                                      admitted)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)""")
                    .execute(
                        Tuple.wrap(
                            new Object[] {
                              id,
                              host.name(),
                              state.wire(),
                              shape,
                              host.address(),
                              host.facts(),
                              withImage(labels, host.facts()),
                              host.systemUuid(),
                              host.primaryMac(),
                              admitted
                            })))
        .mapEmpty();
  }

  static Future<Void> upsertShape(SqlConnection tx, String shape, JsonObject facts) {
    JsonArray gpus = new JsonArray();
    for (Map.Entry<String, Integer> g : ShapeNamer.gpuCounts(facts).entrySet()) {
      gpus.add(new JsonObject().put("model", g.getKey()).put("count", g.getValue()));
    }
    return tx.preparedQuery(
            """
            INSERT INTO shapes (name, arch, cpus, memory_gib, gpus) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (name) DO NOTHING""")
        .execute(
            Tuple.of(
                shape,
                ShapeNamer.arch(facts.getString("arch")),
                facts.getInteger("cpus"),
                ShapeNamer.memoryGiB(facts),
                gpus))
        .mapEmpty();
  }

  private static Throwable duplicateIdentity(Throwable err) {
    if (err instanceof PgException pg && "23505".equals(pg.getSqlState())) {
      String what =
          "machines_primary_mac_key".equals(pg.getConstraint()) ? "primaryMac" : "systemUuid";
      return new Refusal(
          Reason.Conflict,
          "a machine with this " + what + " is already registered",
          "identity." + what,
          null);
    }
    return err;
  }

  Future<Machine> cordon(String machineId, boolean cordoned) {
    return Tx.run(
        db,
        tx ->
            lock(tx, machineId)
                .compose(
                    m -> {
                      if (MachineState.RETIRED.wire().equals(m.getString("state"))) {
                        throw Refusal.of(
                            Reason.InvalidState, "machine " + machineId + " is retired");
                      }
                      if (m.getBoolean("cordoned") == cordoned) {
                        return Lookups.machine(tx, machineId);
                      }
                      return tx.preparedQuery("UPDATE machines SET cordoned = $2 WHERE id = $1")
                          .execute(Tuple.of(machineId, cordoned))
                          .compose(
                              x ->
                                  Transitions.note(
                                      tx,
                                      cordoned ? "MachineCordoned" : "MachineUncordoned",
                                      machineId,
                                      machineId,
                                      null,
                                      null))
                          .compose(x -> Lookups.machine(tx, machineId));
                    }));
  }

  Future<Machine> retire(String machineId) {
    return Tx.run(
        db,
        tx ->
            lock(tx, machineId)
                .compose(
                    m -> {
                      MachineState state = MachineState.fromWire(m.getString("state"));
                      if (state == MachineState.RETIRED) {
                        return Lookups.machine(tx, machineId);
                      }
                      if (state == MachineState.RESETTING && m.getString("instance_id") != null) {
                        throw resetPending(machineId, m.getString("instance_id"), "retired");
                      }
                      if (m.getString("instance_id") != null
                          || !Transitions.allowed(state, MachineState.RETIRED)) {
                        throw Refusal.of(
                            Reason.InvalidState,
                            "machine "
                                + machineId
                                + " is "
                                + state.wire()
                                + (m.getString("instance_id") != null
                                    ? " with instance " + m.getString("instance_id")
                                    : "")
                                + "; terminate its instance first");
                      }
                      return Transitions.cancelMachineCommands(tx, machineId, "machine retired")
                          .compose(
                              x ->
                                  Transitions.machine(
                                      tx,
                                      machineId,
                                      state,
                                      MachineState.RETIRED,
                                      "retired by an operator"))
                          .compose(x -> Lookups.machine(tx, machineId));
                    }));
  }

  /**
   * Admits a machine: new hardware an operator vouches for. A {@code new} one goes {@code standby}
   * (its pool prepares it); one still enrolling or out of contact goes there when its agent says
   * hello. Already admitted: answered as it is.
   */
  Future<Machine> accept(String machineId, String by) {
    return Tx.run(
        db,
        tx ->
            lock(tx, machineId)
                .compose(
                    m -> {
                      MachineState state = MachineState.fromWire(m.getString("state"));
                      if (state == MachineState.RETIRED) {
                        throw Refusal.of(
                            Reason.InvalidState,
                            "machine "
                                + machineId
                                + " is retired"
                                + (m.getBoolean("admitted") ? "" : " (rejected)")
                                + "; it cannot be accepted");
                      }
                      if (m.getBoolean("admitted")) {
                        return Lookups.machine(tx, machineId);
                      }
                      return tx.preparedQuery("UPDATE machines SET admitted = true WHERE id = $1")
                          .execute(Tuple.of(machineId))
                          .compose(
                              x ->
                                  Enroller.accepted(
                                      tx,
                                      machineId,
                                      "accepted by an operator",
                                      new JsonObject().put("by", by)))
                          .compose(
                              x ->
                                  state == MachineState.NEW
                                      ? Transitions.machine(
                                          tx,
                                          machineId,
                                          state,
                                          MachineState.STANDBY,
                                          "accepted by an operator")
                                      : Future.succeededFuture())
                          .compose(x -> Lookups.machine(tx, machineId));
                    }));
  }

  /**
   * Rejects new hardware: retired, so its agent's certificate stops counting. The identity it
   * reported is released (kept in the event): whoever made it up may have taken a real server's
   * MAC, and that server must be able to enroll later; the same made-up server booting again is new
   * hardware again, waiting like the first time. Refused for an admitted machine (retire that one:
   * this is for what nobody vouched for).
   */
  Future<Machine> reject(String machineId, String by) {
    return Tx.run(
        db,
        tx ->
            lock(tx, machineId)
                .compose(
                    m -> {
                      MachineState state = MachineState.fromWire(m.getString("state"));
                      if (m.getBoolean("admitted")) {
                        throw Refusal.of(
                            Reason.InvalidState,
                            "machine "
                                + machineId
                                + " is admitted ("
                                + state.wire()
                                + "); only new hardware waiting for acceptance is rejected — retire it instead");
                      }
                      if (state == MachineState.RETIRED) {
                        return Lookups.machine(tx, machineId);
                      }
                      return tx.preparedQuery(
                              """
              UPDATE machines m SET system_uuid = NULL, primary_mac = NULL FROM machines prior
              WHERE m.id = $1 AND prior.id = m.id RETURNING prior.system_uuid, prior.primary_mac""")
                          .execute(Tuple.of(machineId))
                          .compose(
                              rows -> {
                                Row identity = rows.iterator().next();
                                return Transitions.cancelMachineCommands(
                                        tx, machineId, "machine rejected")
                                    .compose(
                                        x ->
                                            Transitions.machine(
                                                tx,
                                                machineId,
                                                state,
                                                MachineState.RETIRED,
                                                "rejected by an operator"))
                                    .compose(
                                        x ->
                                            Transitions.note(
                                                tx,
                                                "MachineRejected",
                                                machineId,
                                                machineId,
                                                "rejected by an operator; its identity is released",
                                                new JsonObject()
                                                    .put("by", by)
                                                    .put(
                                                        "systemUuid",
                                                        identity.getString("system_uuid"))
                                                    .put(
                                                        "primaryMac",
                                                        identity.getString("primary_mac"))));
                              })
                          .compose(x -> Lookups.machine(tx, machineId));
                    }));
  }

  /**
   * Tells an idle machine's agent to reboot: its open commands are cancelled, it goes {@code
   * rebooting} with a {@code reboot} queued (and back through {@code enrolling} when it enrolls
   * again, or {@code standby} when its agent reconnects after running the reboot). Refused for a
   * machine that carries an instance or that no agent could be told (offline, enrolling, retired).
   * Already rebooting: answered as it is.
   */
  Future<Machine> reboot(String machineId, String reason) {
    return Tx.run(
        db,
        tx ->
            lock(tx, machineId)
                .compose(
                    m -> {
                      MachineState state = MachineState.fromWire(m.getString("state"));
                      if (state == MachineState.REBOOTING) {
                        return Lookups.machine(tx, machineId);
                      }
                      if (state == MachineState.RESETTING && m.getString("instance_id") != null) {
                        throw resetPending(machineId, m.getString("instance_id"), "rebooted");
                      }
                      if (m.getString("instance_id") != null
                          || !Transitions.allowed(state, MachineState.REBOOTING)) {
                        throw Refusal.of(
                            Reason.InvalidState,
                            "machine "
                                + machineId
                                + " is "
                                + state.wire()
                                + (m.getString("instance_id") != null
                                    ? " with instance "
                                        + m.getString("instance_id")
                                        + ": a reboot would take the node down under its pods; terminate the instance first"
                                    : ": only a warm, standby, preparing or failed machine's agent can be told to reboot"));
                      }
                      return rebootFrom(tx, machineId, state, reason)
                          .compose(x -> Lookups.machine(tx, machineId));
                    }));
  }

  /**
   * A machine resetting under an instance already terminated (shutting down): nothing to terminate,
   * the reset waits for its result — from the agent, or from an operator for a machine whose agent
   * is gone.
   */
  private static Refusal resetPending(String machineId, String instanceId, String done) {
    return Refusal.of(
        Reason.InvalidState,
        "machine "
            + machineId
            + " is resetting: instance "
            + instanceId
            + " was terminated and the reset waits for the agent's report (or an operator's, POST "
            + "/v1/commands/{commandId}/result, for an agent that is gone); it can be "
            + done
            + " once the reset is "
            + "reported");
  }

  /**
   * {@code from → rebooting} with a reboot queued (its open commands cancelled); false if no longer
   * in {@code from}.
   */
  static Future<Boolean> rebootFrom(
      SqlConnection tx, String machineId, MachineState from, String reason) {
    return Transitions.machine(tx, machineId, from, MachineState.REBOOTING, reason)
        .compose(
            moved ->
                !moved
                    ? Future.succeededFuture(false)
                    : Transitions.cancelMachineCommands(tx, machineId, "superseded by a reboot")
                        .compose(x -> Transitions.enqueue(tx, machineId, null, "reboot"))
                        .map(true));
  }

  /** Locks a machine row for the rest of the transaction; refused as NotFound if there is none. */
  static Future<Row> lock(SqlConnection tx, String machineId) {
    return tx.preparedQuery(
            "SELECT state, cordoned, instance_id, offline_from, cert_serial, admitted FROM machines WHERE id = $1"
                + " FOR UPDATE")
        .execute(Tuple.of(machineId))
        .map(
            rows -> {
              if (rows.size() == 0) {
                throw Refusal.notFound("machine", machineId);
              }
              return rows.iterator().next();
            });
  }
}
