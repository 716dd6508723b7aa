package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.auth.Principal;
import io.warmmetal.api.crypto.SecretBox;
import io.warmmetal.api.enrollment.CertificateAuthority;
import io.warmmetal.api.enrollment.EnrollmentTokens;
import io.warmmetal.api.lifecycle.CommandWakeups;
import io.warmmetal.api.lifecycle.EnrollmentRequest;
import io.warmmetal.api.lifecycle.LaunchResult;
import io.warmmetal.api.lifecycle.LaunchSpec;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.metrics.FleetMetrics;
import java.time.Duration;

/** Routes each transition to the class that owns that part of the state machines. */
public final class LifecycleImpl implements Lifecycle {
  private final Registrar registrar;
  private final Enroller enroller;
  private final Launcher launcher;
  private final Terminator terminator;
  private final CommandResults results;
  private final PoolReconciler pools;
  private final AgentPresence presence;

  public LifecycleImpl(Vertx vertx, Pool db, SecretBox secrets, FleetMetrics metrics, EnrollmentTokens tokens,
      CertificateAuthority ca, Duration agentCertValidity, CommandWakeups wakeups) {
    this.registrar = new Registrar(db);
    this.enroller = new Enroller(vertx, db, tokens, ca, agentCertValidity);
    this.launcher = new Launcher(vertx, db, secrets, metrics, wakeups);
    this.terminator = new Terminator(db, wakeups);
    this.results = new CommandResults(db, wakeups);
    this.pools = new PoolReconciler(db, metrics, wakeups);
    this.presence = new AgentPresence(db);
  }

  @Override
  public Future<JsonObject> register(JsonObject registration) {
    return registrar.register(registration);
  }

  @Override
  public Future<JsonObject> enroll(EnrollmentRequest request) {
    return enroller.enroll(request);
  }

  @Override
  public Future<JsonObject> renew(String machineId, String certSerial, String csrPem) {
    return enroller.renew(machineId, certSerial, csrPem);
  }

  @Override
  public Future<JsonObject> cordon(String machineId, boolean cordoned) {
    return registrar.cordon(machineId, cordoned);
  }

  @Override
  public Future<JsonObject> retire(String machineId) {
    return registrar.retire(machineId);
  }

  @Override
  public Future<LaunchResult> launch(LaunchSpec spec) {
    return launcher.launch(spec);
  }

  @Override
  public Future<JsonObject> terminate(String instanceId, Principal caller) {
    return terminator.terminate(instanceId, caller);
  }

  @Override
  public Future<JsonObject> reportCommandResult(String commandId, boolean succeeded, String message) {
    return results.report(commandId, null, succeeded, message);
  }

  @Override
  public Future<JsonObject> reportAgentResult(String machineId, String certSerial, String commandId,
      boolean succeeded, String message) {
    return results.report(commandId, new CommandResults.Reporter(machineId, certSerial), succeeded, message);
  }

  @Override
  public Future<Void> recordProgress(String machineId, String certSerial, String commandId, String step,
      String message) {
    return presence.progress(machineId, certSerial, commandId, step, message);
  }

  @Override
  public Future<Void> agentConnected(String machineId, String certSerial) {
    return presence.connected(machineId, certSerial);
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
  public Future<Void> reconcilePools() {
    return pools.reconcile();
  }
}
