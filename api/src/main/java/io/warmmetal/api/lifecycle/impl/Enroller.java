package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.api.crypto.Ids;
import io.warmmetal.api.lifecycle.AgentCertificate;
import io.warmmetal.api.lifecycle.EnrollmentGrants;
import io.warmmetal.api.lifecycle.EnrollmentGrants.Grant;
import io.warmmetal.api.lifecycle.EnrollmentRequest;
import io.warmmetal.api.lifecycle.HardwareInventory;
import io.warmmetal.api.lifecycle.Host;
import io.warmmetal.api.lifecycle.MachineState;
import io.warmmetal.api.lifecycle.Refusal;
import io.warmmetal.api.lifecycle.Refusal.Reason;
import io.warmmetal.api.lifecycle.ShapeNamer;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;

/**
 * Agents entering the fleet. One transaction: use up the token, find the machine the same hardware
 * enrolled before (by DMI system UUID or primary MAC) or register a new one in {@code enrolling},
 * sign the client certificate for that machine id and remember its serial — the only certificate
 * the channel will accept for the machine. Whoever minted the token learns, in the same
 * transaction, which machine it enrolled (an SSH enrollment hands over its SSH access).
 *
 * <p>New hardware is admitted, not assumed: a machine new to the fleet that enrolls with a token a
 * network boot minted (whoever holds the boot credential can mint one, for any identity and facts
 * it likes) is not admitted — its hello takes it to {@code new}, where it waits for an operator —
 * unless the operator registered its MAC or system UUID beforehand (a hardware record, whose labels
 * it gets). Hardware the fleet already knows keeps its admission.
 */
final class Enroller {
  private final Vertx vertx;
  private final Pool db;
  private final EnrollmentGrants grants;
  private final HardwareInventory inventory;
  private final CertificateAuthority ca;
  private final Duration validity;

  Enroller(
      Vertx vertx,
      Pool db,
      EnrollmentGrants grants,
      HardwareInventory inventory,
      CertificateAuthority ca,
      Duration validity) {
    this.vertx = vertx;
    this.db = db;
    this.grants = grants;
    this.inventory = inventory;
    this.ca = ca;
    this.validity = validity;
  }

  Future<AgentCertificate> enroll(EnrollmentRequest request) {
    Host host = request.host();
    String shape = ShapeNamer.name(host.facts());
    if (shape.length() > ShapeNamer.MAX_LENGTH) {
      return Future.failedFuture(
          Refusal.invalid(
              "facts.gpus",
              "the facts make a shape name longer than " + ShapeNamer.MAX_LENGTH + " characters"));
    }
    return readCsr(request.csrPem())
        .compose(
            csr ->
                Tx.run(
                    db,
                    tx ->
                        grants
                            .consume(tx, request.token())
                            .compose(
                                grant ->
                                    machineFor(tx, host, shape, grant)
                                        .compose(
                                            machineId ->
                                                grants
                                                    .granted(tx, grant, machineId)
                                                    .map(machineId)))
                            .compose(
                                machineId ->
                                    sign(csr, machineId)
                                        .compose(
                                            cert ->
                                                remember(tx, machineId, host, shape, cert)
                                                    .map(x -> answer(machineId, cert))))))
        .recover(
            err ->
                err instanceof Refusal r && REFUSALS_TO_RECORD.contains(r.reason())
                    ? recordRefusal(host, r).transform(x -> Future.failedFuture(err))
                    : Future.failedFuture(err));
  }

  /**
   * Refusals an operator wants to see on the machine: a boot with a wrong, used or expired token,
   * say.
   */
  private static final Set<Reason> REFUSALS_TO_RECORD =
      EnumSet.of(Reason.Unauthorized, Reason.Conflict);

  /**
   * Says on the machine this hardware already is, if any, that its enrollment was refused and why —
   * at most once a minute per machine: the request is not authenticated, so it may record nothing
   * else, and nothing for hardware the fleet does not know.
   */
  private Future<Void> recordRefusal(Host host, Refusal refusal) {
    return db.preparedQuery(
            """
            INSERT INTO events (type, subject, machine_id, reason, details)
            SELECT 'EnrollmentRefused', m.id, m.id, $3, jsonb_build_object('name', $4::text, 'address', $5::text)
            FROM machines m
            WHERE (m.system_uuid = $1 OR m.primary_mac = $2) AND m.state <> 'retired'
              AND NOT EXISTS (SELECT 1 FROM events e WHERE e.machine_id = m.id AND e.type = 'EnrollmentRefused'
                                AND e.at > now() - interval '1 minute')
            LIMIT 1""")
        .execute(
            Tuple.of(
                host.systemUuid(),
                host.primaryMac(),
                "enrollment refused: " + refusal.getMessage(),
                host.name(),
                host.address()))
        .<Void>mapEmpty()
        .recover(
            err ->
                Future.succeededFuture()); // the refusal is the answer; recording it is a courtesy
  }

  /** The certificate request, parsed on a worker thread; 400 on {@code csr} if it is none. */
  private Future<PKCS10CertificationRequest> readCsr(String pem) {
    return vertx
        .executeBlocking(() -> CertificateAuthority.readCsr(pem), false)
        .recover(err -> Future.failedFuture(Refusal.invalid("csr", err.getMessage())));
  }

  /** The machine's client certificate for the request, signed on a worker thread. */
  private Future<X509Certificate> sign(PKCS10CertificationRequest csr, String machineId) {
    return vertx
        .executeBlocking(() -> ca.signAgent(csr, machineId, validity), false)
        .recover(err -> Future.failedFuture(Refusal.invalid("csr", err.getMessage())));
  }

  Future<AgentCertificate> renew(String machineId, String certSerial, String csrPem) {
    return readCsr(csrPem)
        .compose(
            csr ->
                Tx.run(
                    db,
                    tx ->
                        tx.preparedQuery(
                                """
                SELECT state FROM machines WHERE id = $1 AND $2 IN (cert_serial, next_cert_serial) FOR UPDATE""")
                            .execute(Tuple.of(machineId, certSerial))
                            .compose(
                                rows -> {
                                  if (rows.size() == 0
                                      || MachineState.RETIRED
                                          .wire()
                                          .equals(rows.iterator().next().getString("state"))) {
                                    throw Refusal.of(
                                        Reason.Unauthorized,
                                        "this certificate is not machine "
                                            + machineId
                                            + "'s current one (or the machine is retired): enroll again");
                                  }
                                  return sign(csr, machineId);
                                })
                            .compose(
                                cert ->
                                    tx.preparedQuery(
                                            "UPDATE machines SET next_cert_serial = $2 WHERE id = $1")
                                        .execute(
                                            Tuple.of(
                                                machineId, cert.getSerialNumber().toString(16)))
                                        .compose(
                                            x ->
                                                Transitions.note(
                                                    tx,
                                                    "MachineCertified",
                                                    machineId,
                                                    machineId,
                                                    "client certificate "
                                                        + cert.getSerialNumber().toString(16)
                                                        + " issued (renewal)",
                                                    null))
                                        .map(x -> answer(machineId, cert)))));
  }

  /** The machine this hardware already is, or a new one in {@code enrolling}. */
  private Future<String> machineFor(SqlConnection tx, Host host, String shape, Grant grant) {
    return tx.preparedQuery(
            """
            SELECT id, state, instance_id, admitted, power_state = 'off' AS off,
                   power_state = 'on' AND (last_seen IS NULL OR last_seen < power_changed_at) AS booting
            FROM machines WHERE system_uuid = $1 OR primary_mac = $2 FOR UPDATE""")
        .execute(Tuple.of(host.systemUuid(), host.primaryMac()))
        .compose(
            rows -> {
              if (rows.size() > 1) {
                throw Refusal.of(
                    Reason.Conflict,
                    "this system UUID and this MAC belong to two different machines");
              }
              if (rows.size() == 1) {
                Row existing = rows.iterator().next();
                if (MachineState.RETIRED.wire().equals(existing.getString("state"))) {
                  throw Refusal.of(
                      Reason.InvalidState,
                      "machine " + existing.getString("id") + " (this hardware) is retired");
                }
                if (!grant.reenroll()) {
                  // Whoever re-enrolls takes over the machine (its commands, its joins' secrets): a
                  // fleet-wide token
                  // must not be enough; the identity is facts the agent merely reports.
                  throw Refusal.of(
                      Reason.Conflict,
                      "this hardware is already enrolled as machine "
                          + existing.getString("id")
                          + "; re-enrolling it needs a token minted with allowReenroll");
                }
                if (grant.idleOnly() && !idle(existing)) {
                  // Said without the machine's id or state: a boot token is easy to come by;
                  // probing must teach nothing.
                  throw Refusal.of(
                      Reason.Conflict, "this hardware cannot re-enroll with a boot token now");
                }
                String id = existing.getString("id");
                return startOver(tx, existing)
                    .compose(
                        x ->
                            existing.getBoolean("admitted")
                                ? Future.succeededFuture()
                                : grant.admits()
                                    ? admit(
                                        tx,
                                        id,
                                        new JsonObject(),
                                        "enrolled with an operator's token")
                                    : admitKnown(tx, host, id))
                    .map(id);
              }
              String id = Ids.machineId();
              if (grant.admits()) {
                return Registrar.insert(
                        tx, id, MachineState.ENROLLING, shape, host, grant.labels(), true)
                    .compose(
                        x ->
                            Transitions.machineCreated(
                                tx, id, MachineState.ENROLLING, "enrolled by its agent"))
                    .map(id);
              }
              return inventory
                  .admit(tx, host, id)
                  .compose(
                      record -> {
                        JsonObject labels = grant.labels().copy();
                        record.ifPresent(
                            r ->
                                labels.mergeIn(
                                    r.labels())); // the record names this server: it wins
                        return Registrar.insert(
                                tx,
                                id,
                                MachineState.ENROLLING,
                                shape,
                                host,
                                labels,
                                record.isPresent())
                            .compose(
                                x ->
                                    Transitions.machineCreated(
                                        tx,
                                        id,
                                        MachineState.ENROLLING,
                                        "enrolled by its agent"
                                            + " (network boot, boot token "
                                            + grant.bootTokenId()
                                            + ")"
                                            + (record.isPresent()
                                                ? ""
                                                : ": new hardware, it waits for an operator to accept it")))
                            .compose(
                                x ->
                                    record.isEmpty()
                                        ? Future.succeededFuture()
                                        : accepted(
                                            tx,
                                            id,
                                            "matched hardware record " + record.get().recordId(),
                                            null))
                            .map(id);
                      });
            });
  }

  /**
   * New hardware still waiting, enrolling again: admitted now if the operator has registered it
   * since.
   */
  private Future<Void> admitKnown(SqlConnection tx, Host host, String machineId) {
    return inventory
        .admit(tx, host, machineId)
        .compose(
            record ->
                record.isEmpty()
                    ? Future.succeededFuture()
                    : admit(
                        tx,
                        machineId,
                        record.get().labels(),
                        "matched hardware record " + record.get().recordId()));
  }

  /** Admits a waiting machine, adding {@code labels}; {@code how} goes in the event. */
  private static Future<Void> admit(
      SqlConnection tx, String machineId, JsonObject labels, String how) {
    return tx.preparedQuery(
            "UPDATE machines SET admitted = true, labels = labels || $2 WHERE id = $1")
        .execute(Tuple.of(machineId, labels))
        .compose(x -> accepted(tx, machineId, how, null));
  }

  /** The event saying a machine was admitted, and how. */
  static Future<Void> accepted(SqlConnection tx, String machineId, String how, JsonObject details) {
    return Transitions.note(tx, "MachineAccepted", machineId, machineId, how, details);
  }

  /**
   * The same hardware enrolling again has restarted without its state (a network-booted server
   * keeps nothing): what it was prepared for is gone. Unless it carries an instance or is
   * quarantined, it starts over — {@code enrolling}, its open commands cancelled — and its hello
   * brings it to {@code standby}, where the pool prepares it again. A reboot the API ordered is
   * done.
   */
  private static Future<Void> startOver(SqlConnection tx, Row existing) {
    String id = existing.getString("id");
    MachineState state = MachineState.fromWire(existing.getString("state"));
    if (existing.getString("instance_id") != null
        || !Transitions.allowed(state, MachineState.ENROLLING)) {
      return Future.succeededFuture();
    }
    return tx.preparedQuery(
            """
            WITH c AS (
              UPDATE commands SET status = 'succeeded', message = 'the server booted again', finished_at = now()
              WHERE machine_id = $1 AND type = 'reboot' AND status IN ('queued', 'delivered')
              RETURNING id, machine_id)
            INSERT INTO events (type, subject, machine_id, to_state, reason)
            SELECT 'CommandResult', id, machine_id, 'succeeded', 'reboot: the server booted again' FROM c""")
        .execute(Tuple.of(id))
        .compose(x -> Transitions.cancelMachineCommands(tx, id, "the server restarted"))
        .compose(
            x ->
                Transitions.machine(
                    tx, id, state, MachineState.ENROLLING, "enrolled again: the server restarted"))
        .mapEmpty();
  }

  /**
   * Whether a boot token may take this machine back: it carries no instance (whose join and its
   * secrets would go to whoever re-enrolls — the hardware identity is merely reported, and a boot
   * credential sits in DHCP configuration), and it is booting after the API switched it on or told
   * it to reboot, or switched off, or out of contact (offline, failed, or never connected).
   */
  private static boolean idle(Row machine) {
    String state = machine.getString("state");
    return machine.getString("instance_id") == null
        && (Boolean.TRUE.equals(machine.getBoolean("booting"))
            || Boolean.TRUE.equals(machine.getBoolean("off"))
            || state.equals("offline")
            || state.equals("failed")
            || state.equals("enrolling")
            || state.equals("rebooting"));
  }

  private static Future<Void> remember(
      SqlConnection tx, String machineId, Host host, String shape, X509Certificate cert) {
    return Registrar.upsertShape(tx, shape, host.facts())
        .compose(
            x ->
                tx.preparedQuery(
                        """
            UPDATE machines SET cert_serial = $2, next_cert_serial = NULL,
              -- a new lease's address, facts (the image it booted, say) and so shape, but never under an instance:
              -- its tenant was told where it is and what it got
              address = CASE WHEN instance_id IS NULL THEN coalesce($3, address) ELSE address END,
              facts = CASE WHEN instance_id IS NULL THEN $4 ELSE facts END,
              shape = CASE WHEN instance_id IS NULL THEN $5 ELSE shape END,
              labels = CASE WHEN instance_id IS NULL THEN (labels - 'warmmetal.io/image')
                || CASE WHEN $6::text IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('warmmetal.io/image', $6::text) END
                ELSE labels END
            WHERE id = $1""")
                    .execute(
                        Tuple.of(
                            machineId,
                            cert.getSerialNumber().toString(16),
                            host.address(),
                            host.facts(),
                            shape,
                            Registrar.imageOf(host.facts()))))
        .compose(
            x ->
                Transitions.note(
                    tx,
                    "MachineCertified",
                    machineId,
                    machineId,
                    "client certificate " + cert.getSerialNumber().toString(16) + " issued",
                    null));
  }

  private AgentCertificate answer(String machineId, X509Certificate cert) {
    return new AgentCertificate(
        machineId, CertificateAuthority.pem(cert), CertificateAuthority.pem(ca.certificate()));
  }
}
