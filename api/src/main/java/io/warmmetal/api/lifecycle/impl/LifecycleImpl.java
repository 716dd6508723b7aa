package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.api.crypto.SecretBox;
import io.warmmetal.api.lifecycle.AgentCertificate;
import io.warmmetal.api.lifecycle.Caller;
import io.warmmetal.api.lifecycle.Command;
import io.warmmetal.api.lifecycle.Committed;
import io.warmmetal.api.lifecycle.EnrollmentGrants;
import io.warmmetal.api.lifecycle.EnrollmentRequest;
import io.warmmetal.api.lifecycle.HardwareInventory;
import io.warmmetal.api.lifecycle.Instance;
import io.warmmetal.api.lifecycle.Launch;
import io.warmmetal.api.lifecycle.LaunchBatching;
import io.warmmetal.api.lifecycle.LaunchSpec;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.lifecycle.Machine;
import io.warmmetal.api.lifecycle.PoolDecisions;
import io.warmmetal.api.lifecycle.Registration;
import io.warmmetal.api.metrics.FleetMetrics;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Routes each transition to the class that owns that part of the state machines. */
public final class LifecycleImpl implements Lifecycle {
  private final Commits commits = new Commits();
  private final Registrar registrar;
  private final Enroller enroller;
  private final Launcher launcher;
  private final Terminator terminator;
  private final CommandResults results;
  private final PoolReconciler pools;
  private final AgentPresence presence;

  public LifecycleImpl(
      Vertx vertx,
      Pool db,
      SecretBox secrets,
      FleetMetrics metrics,
      CertificateAuthority ca,
      Duration agentCertValidity,
      EnrollmentGrants grants,
      HardwareInventory inventory,
      LaunchBatching batching) {
    this.registrar = new Registrar(db);
    this.enroller = new Enroller(vertx, db, grants, inventory, ca, agentCertValidity);
    this.launcher =
        new Launcher(
            vertx,
            db,
            new LaunchBatches(
                db,
                batching.maxBatch(),
                batching.callsInFlight(),
                LaunchBatches.reportingTo(metrics)),
            secrets,
            metrics,
            commits);
    this.terminator = new Terminator(db, commits);
    this.results = new CommandResults(db, commits);
    this.pools = new PoolReconciler(db, metrics, commits);
    this.presence = new AgentPresence(db, commits);
  }

  @Override
  public void onCommit(Handler<Committed> subscriber) {
    commits.subscribe(subscriber);
  }

  @Override
  public Future<Machine> register(Registration registration) {
    return poolsMoved(registrar.register(registration));
  }

  @Override
  public Future<AgentCertificate> enroll(EnrollmentRequest request) {
    return enroller.enroll(request);
  }

  @Override
  public Future<Machine> accept(String machineId, String by) {
    return poolsMoved(registrar.accept(machineId, by));
  }

  @Override
  public Future<Machine> reject(String machineId, String by) {
    return registrar.reject(machineId, by);
  }

  @Override
  public Future<AgentCertificate> renew(String machineId, String certSerial, String csrPem) {
    return enroller.renew(machineId, certSerial, csrPem);
  }

  @Override
  public Future<Machine> cordon(String machineId, boolean cordoned) {
    return poolsMoved(registrar.cordon(machineId, cordoned));
  }

  @Override
  public Future<Machine> retire(String machineId) {
    return poolsMoved(registrar.retire(machineId));
  }

  /**
   * A machine came into the fleet, left it, or began or stopped counting for its pool: a pass may
   * be due.
   */
  private Future<Machine> poolsMoved(Future<Machine> change) {
    return change.onSuccess(m -> commits.publish(Committed.poolsMoved(List.of())));
  }

  @Override
  public Future<Machine> reboot(String machineId, String reason) {
    return registrar
        .reboot(machineId, reason)
        .onSuccess(m -> commits.publish(Committed.poolsMoved(List.of(machineId))));
  }

  @Override
  public Future<Launch> launch(LaunchSpec spec) {
    return launcher.launch(spec);
  }

  @Override
  public Future<Instance> terminate(String instanceId, Caller caller) {
    return terminator.terminate(instanceId, caller);
  }

  @Override
  public Future<Command> reportCommandResult(String commandId, boolean succeeded, String message) {
    return results.report(commandId, null, succeeded, message);
  }

  @Override
  public Future<Command> reportAgentResult(
      String machineId, String certSerial, String commandId, boolean succeeded, String message) {
    return results.report(
        commandId, new CommandResults.Reporter(machineId, certSerial), succeeded, message);
  }

  @Override
  public Future<Void> recordProgress(
      String machineId, String certSerial, String commandId, String step, String message) {
    return presence.progress(machineId, certSerial, commandId, step, message);
  }

  @Override
  public Future<Void> agentConnected(String machineId, String certSerial) {
    return presence.connected(machineId, certSerial);
  }

  @Override
  public Future<Set<String>> agentsHeard(Map<String, String> certSerials) {
    return presence.heard(certSerials);
  }

  @Override
  public Future<Integer> markSilentOffline(Duration silence, Duration bootGrace) {
    return presence.markSilentOffline(silence, bootGrace);
  }

  @Override
  public Future<Integer> expireJoins(Duration timeout) {
    return presence.expireJoins(timeout, results);
  }

  @Override
  public Future<PoolDecisions> reconcilePools() {
    return pools.reconcile();
  }
}
