package io.warmmetal.api.lifecycle;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.api.crypto.SecretBox;
import io.warmmetal.api.lifecycle.impl.LifecycleImpl;
import io.warmmetal.api.metrics.FleetMetrics;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * The one owner of every machine and instance state transition. Each method is one PostgreSQL
 * transaction that changes state, queues the commands the change implies and records an event for
 * every change, so a crash at any point leaves either all of it or none of it. Nothing else writes
 * {@code machines.state} or {@code instances.state}.
 *
 * <p>It speaks the domain: it takes and returns the records of this package and fails with a {@link
 * Refusal} (or, for the unexpected, any other exception). What a committed change means for others
 * is told to the {@link #onCommit} subscribers.
 *
 * <p>It owns presence (who is online: the only writer of {@code machines.last_seen}); the pools'
 * decisions are {@link PoolPlanner}'s, which {@link #reconcilePools} applies.
 *
 * <p>Commands are queued in the durable {@code commands} table; their results, reported by an agent
 * (or an operator for a machine without one), come back through {@link #reportCommandResult} and
 * drive the next transition.
 */
public interface Lifecycle {

  /**
   * @param grants the enrollment tokens (the enrollment edge's)
   * @param inventory the hardware records (the hardware edge's)
   * @param agentCertValidity how long an agent's client certificate is valid
   * @param batching how concurrent launches share database calls
   */
  static Lifecycle create(
      Vertx vertx,
      Pool db,
      SecretBox secrets,
      FleetMetrics metrics,
      CertificateAuthority ca,
      Duration agentCertValidity,
      EnrollmentGrants grants,
      HardwareInventory inventory,
      LaunchBatching batching) {
    return new LifecycleImpl(
        vertx, db, secrets, metrics, ca, agentCertValidity, grants, inventory, batching);
  }

  /**
   * Subscribes to what committed transactions changed; called on the committing event loop, so
   * never block.
   */
  void onCommit(Handler<Committed> subscriber);

  /** Registers a machine by hand: straight to {@code warm} if prepared, else {@code standby}. */
  Future<Machine> register(Registration registration);

  /**
   * Enrolls an agent: uses up one use of its token, registers its machine ({@code enrolling}) or
   * finds the one the same hardware enrolled before, and signs its client certificate, bound to the
   * machine id. A machine new to the fleet that enrolls with a token a network boot minted is not
   * admitted (it waits in {@code new} once its agent connects) unless a hardware record matches its
   * identity.
   */
  Future<AgentCertificate> enroll(EnrollmentRequest request);

  /**
   * An operator accepts new hardware: it is admitted, and a {@code new} one goes {@code standby}
   * (where its pool prepares it). Idempotent for an admitted machine; refused for a retired one.
   * {@code by} goes in the event.
   */
  Future<Machine> accept(String machineId, String by);

  /**
   * An operator rejects new hardware: it is retired (its agent shut out; its identity cannot enroll
   * again). Refused for a machine that was admitted (retire that one); idempotent once retired.
   */
  Future<Machine> reject(String machineId, String by);

  /**
   * Renews a machine's client certificate: {@code certSerial} (the certificate the agent presented
   * on the agent port) must be the machine's current or already-renewed one; the new certificate
   * becomes the machine's next one, which replaces the current when the agent first holds the
   * channel with it.
   */
  Future<AgentCertificate> renew(String machineId, String certSerial, String csrPem);

  Future<Machine> cordon(String machineId, boolean cordoned);

  /** Takes an idle machine out of the fleet for good; refused while it carries an instance. */
  Future<Machine> retire(String machineId);

  /**
   * Tells an idle machine's agent to reboot ({@code rebooting}, a {@code reboot} queued): a
   * network-booted server comes back with the image its pool wants and enrolls again. {@code
   * reason} goes in the event.
   */
  Future<Machine> reboot(String machineId, String reason);

  /**
   * Claims machines for a launch in one transaction ({@code SELECT … FOR UPDATE SKIP LOCKED});
   * refused with {@code InsufficientCapacity} when fewer than {@code minCount} can be had, claiming
   * none.
   */
  Future<Launch> launch(LaunchSpec spec);

  /** Terminates an instance: cancels its open commands and resets its machine. Idempotent. */
  Future<Instance> terminate(String instanceId, Caller caller);

  /**
   * Records a command's outcome and applies the transition it implies. Reporting the same outcome
   * again is a no-op.
   */
  Future<Command> reportCommandResult(String commandId, boolean succeeded, String message);

  /**
   * A result from a machine's agent: as {@link #reportCommandResult}, but refused ({@code
   * Forbidden}) if the command is not that machine's, or the certificate it speaks with ({@code
   * certSerial}) is no longer the machine's.
   */
  Future<Command> reportAgentResult(
      String machineId, String certSerial, String commandId, boolean succeeded, String message);

  /**
   * Records a step an agent started (an event per step, so its timing can be read from the event
   * log).
   */
  Future<Void> recordProgress(
      String machineId, String certSerial, String commandId, String step, String message);

  /**
   * The machine's agent said hello: a newly enrolled machine goes {@code enrolling → standby} (the
   * pool manager may then prepare it), or {@code enrolling → new} if it waits for acceptance; an
   * offline one goes back to where it was.
   */
  Future<Void> agentConnected(String machineId, String certSerial);

  /**
   * Agents a replica holds connections for were heard ({@code certSerials}: machine id → the serial
   * each speaks with): their machines are seen now, and any still marked offline or enrolling come
   * back as a hello brings them. Answers the machines whose serial is still current; the other
   * connections should be closed.
   */
  Future<Set<String>> agentsHeard(Map<String, String> certSerials);

  /**
   * Machines whose agents have been silent longer than {@code silence} go {@code offline}; their
   * instances say so. Not machines the API switched off, nor ones it switched on less than {@code
   * bootGrace} ago and not heard from since (they are booting).
   */
  Future<Integer> markSilentOffline(Duration silence, Duration bootGrace);

  /**
   * Joins delivered longer than {@code timeout} ago without a result fail: the instance fails, the
   * machine is quarantined.
   */
  Future<Integer> expireJoins(Duration timeout);

  /**
   * One pool pass, under a lock all replicas share: snapshots the pools and their machines, lets
   * {@link PoolPlanner} decide, and carries out the state part (prepares, parks, deficits). Answers
   * the decisions; their power part is the caller's to carry out.
   */
  Future<PoolDecisions> reconcilePools();
}
