package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.crypto.Ids;
import io.warmmetal.api.crypto.SecretBox;
import io.warmmetal.api.lifecycle.Committed;
import io.warmmetal.api.lifecycle.Instance;
import io.warmmetal.api.lifecycle.InstanceState;
import io.warmmetal.api.lifecycle.Launch;
import io.warmmetal.api.lifecycle.LaunchSpec;
import io.warmmetal.api.lifecycle.Lookups;
import io.warmmetal.api.lifecycle.Refusal;
import io.warmmetal.api.lifecycle.Refusal.Reason;
import io.warmmetal.api.metrics.FleetMetrics;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The RunInstances transaction. It runs in the database as {@code launch_instances_batch}
 * (migration {@code R__launch_instances.sql}, which documents its steps), one call for all the
 * launches that arrive together ({@link LaunchBatches}): record the launch under its client token,
 * claim machines (only those carrying the requested machine labels) with {@code FOR UPDATE SKIP
 * LOCKED} so concurrent launches neither share a machine nor wait for each other, and bind
 * instances, join commands and events. Below {@code minCount} nothing is written. This class
 * prepares the inputs off the event loop (ids, the request's fingerprint, sealed secrets) and turns
 * the outcome into a {@link Launch}.
 */
final class Launcher {
  private final Vertx vertx;
  private final Pool db;
  private final LaunchBatches batches;
  private final SecretBox secrets;
  private final FleetMetrics metrics;
  private final Commits commits;

  Launcher(
      Vertx vertx,
      Pool db,
      LaunchBatches batches,
      SecretBox secrets,
      FleetMetrics metrics,
      Commits commits) {
    this.commits = commits;
    this.vertx = vertx;
    this.db = db;
    this.batches = batches;
    this.secrets = secrets;
    this.metrics = metrics;
  }

  Future<Launch> launch(LaunchSpec spec) {
    long started = System.nanoTime();
    return vertx
        .executeBlocking(() -> prepare(spec), false)
        .onSuccess(request -> metrics.launchStage("prepare", System.nanoTime() - started))
        .compose(request -> attempt(spec, request))
        .onComplete(
            ar ->
                metrics.launchFinished(
                    System.nanoTime() - started,
                    ar.succeeded()
                        ? (ar.result().replayed() ? "replayed" : FleetMetrics.LAUNCHED)
                        : ar.cause() instanceof Refusal r ? r.reason().name() : "error"));
  }

  /** On a worker thread: crypto and random ids stay off the event loop. */
  private LaunchBatches.Request prepare(LaunchSpec spec) {
    String launchId = Ids.launchId();
    byte[] hash =
        secrets.fingerprint(
            CanonicalJson.encode(spec.idempotencyView()).getBytes(StandardCharsets.UTF_8));
    byte[] sealed = null;
    if (spec.hasSecrets()) {
      JsonObject secret = new JsonObject();
      if (spec.kubernetes() != null) {
        secret.put("bootstrapToken", spec.kubernetes().getString("bootstrapToken"));
      }
      if (spec.userData() != null) {
        secret.put("userData", Base64.getEncoder().encodeToString(spec.userData()));
      }
      sealed = secrets.seal(secret.encode().getBytes(StandardCharsets.UTF_8), launchId);
    }
    int max = spec.maxCount();
    String[] instanceIds = new String[max];
    String[] joinIds = new String[max];
    String[] prepareIds = new String[max];
    for (int i = 0; i < max; i++) {
      instanceIds[i] = Ids.instanceId();
      joinIds[i] = Ids.commandId();
      prepareIds[i] = spec.allowStandby() ? Ids.commandId() : null;
    }
    return new LaunchBatches.Request(
        launchId,
        spec.caller().project(),
        spec.caller().tokenId(),
        spec.clientToken(),
        hash,
        spec.shapes(),
        spec.allowPreparing(),
        spec.minCount(),
        max,
        spec.labels(),
        spec.publicJoin(),
        sealed,
        spec.userData() != null,
        spec.allowStandby(),
        spec.machineLabels(),
        instanceIds,
        joinIds,
        prepareIds,
        spec.standby(),
        spec.allowPreJoined());
  }

  private Future<Launch> attempt(LaunchSpec spec, LaunchBatches.Request request) {
    return batches
        .submit(request)
        .compose(
            outcome ->
                switch (outcome.getString("outcome")) {
                  case "launched" ->
                      Future.succeededFuture(launched(spec, outcome, request.kubernetes()));
                  case "replayed" ->
                      Lookups.instancesOfLaunch(db, outcome.getString("launchId"))
                          .map(
                              instances ->
                                  new Launch(
                                      outcome.getString("launchId"),
                                      spec.clientToken(),
                                      instances,
                                      true));
                  case "mismatch" ->
                      Future.failedFuture(
                          new Refusal(
                              Reason.IdempotentParameterMismatch,
                              "clientToken '"
                                  + spec.clientToken()
                                  + "' was used by an earlier launch with different parameters",
                              "clientToken",
                              null));
                  case "insufficient" -> Future.failedFuture(insufficient(spec, outcome));
                  case "quota-exceeded" -> Future.failedFuture(overQuota(spec, outcome));
                  case "no-such-shape" ->
                      Future.failedFuture(
                          outcome.containsKey("closed") && spec.caller().operator()
                              ? closedByQuota(spec, outcome)
                              : noSuchShape(spec));
                  default ->
                      Future.failedFuture(
                          new IllegalStateException("unexpected launch outcome " + outcome));
                });
  }

  /**
   * The instances as the function claimed them (no second read), their join commands announced. One
   * on a pre-joined machine runs from the start (the transaction's time, as its {@code
   * running_at}).
   */
  private Launch launched(LaunchSpec spec, JsonObject outcome, JsonObject publicJoin) {
    String launchId = outcome.getString("launchId");
    OffsetDateTime createdAt = OffsetDateTime.parse(outcome.getString("createdAt"));
    List<Instance> instances = new ArrayList<>();
    for (Object o : outcome.getJsonArray("instances")) {
      JsonObject claimed = (JsonObject) o;
      boolean preJoined = claimed.getBoolean("preJoined", false);
      metrics.claimed(claimed.getString("shape"));
      instances.add(
          new Instance(
              claimed.getString("id"),
              launchId,
              spec.caller().project(),
              claimed.getString("machineId"),
              claimed.getString("shape"),
              preJoined ? InstanceState.RUNNING : InstanceState.PENDING,
              null,
              claimed.getString("address"),
              spec.labels(),
              publicJoin,
              spec.userData() != null,
              spec.standby(),
              preJoined,
              createdAt,
              preJoined ? createdAt : null,
              null));
    }
    commits.publish(
        Committed.poolsMoved(instances.stream().map(Instance::machineId).toList())); // their joins
    return new Launch(launchId, spec.clientToken(), instances, false);
  }

  /**
   * None of the shapes exists for the project. One its quota closes (0) is answered exactly so to
   * the project's own tokens, which do not see it: a refusal naming the quota would tell them it
   * exists.
   */
  private static Refusal noSuchShape(LaunchSpec spec) {
    return Refusal.invalid(
        spec.shapes().size() == 1 ? "shape" : "shapes",
        "no such shape: " + String.join(", ", spec.shapes()) + " (GET /v1/shapes lists them)");
  }

  /** An operator, who sees every shape, is told which quota closed the shapes it named. */
  private static Refusal closedByQuota(LaunchSpec spec, JsonObject outcome) {
    return new Refusal(
        Reason.QuotaExceeded,
        "project '"
            + outcome.getString("project")
            + "' may have no instances of "
            + String.join(", ", outcome.getJsonArray("closed").getList())
            + " (its quota is 0)",
        null,
        quotaDetails(spec, outcome));
  }

  private static JsonObject quotaDetails(LaunchSpec spec, JsonObject outcome) {
    return new JsonObject()
        .put("project", outcome.getString("project"))
        .put("minCount", spec.minCount())
        .put("quotas", outcome.getJsonObject("quotas"));
  }

  private static Refusal overQuota(LaunchSpec spec, JsonObject outcome) {
    return new Refusal(
        Reason.QuotaExceeded,
        "project '"
            + outcome.getString("project")
            + "' may have only "
            + outcome.getInteger("claimable")
            + " more instance(s) of "
            + String.join(", ", outcome.getJsonArray("shapes").getList())
            + " under its quotas; minCount is "
            + spec.minCount(),
        null,
        quotaDetails(spec, outcome));
  }

  private static Refusal insufficient(LaunchSpec spec, JsonObject outcome) {
    JsonObject details =
        new JsonObject()
            .put("minCount", spec.minCount())
            .put("allowPreparing", spec.allowPreparing())
            .put("allowStandby", spec.allowStandby())
            .put("allowPreJoined", spec.allowPreJoined())
            .put("available", outcome.getJsonObject("available"));
    String labelled = "";
    if (!spec.machineLabels().isEmpty()) {
      details.put("machineLabels", spec.machineLabels());
      labelled =
          " with labels "
              + spec.machineLabels().stream()
                  .map(e -> e.getKey() + "=" + e.getValue())
                  .collect(Collectors.joining(","));
    }
    // Machines whose kubelet the join's control plane does not accept were passed over: say so, or
    // an operator
    // looking at warm machines would not see why none was taken.
    String kubelets = "";
    JsonObject versions = outcome.getJsonObject("kubeletVersions");
    if (versions != null) {
      details.put("kubeletVersions", versions).put("passedOver", outcome.getLong("passedOver"));
      kubelets =
          " whose kubelet the control plane accepts (v"
              + versions.getString("oldest")
              + " to v"
              + versions.getString("newest")
              + "; "
              + outcome.getLong("passedOver")
              + " other(s) passed over)";
    }
    return new Refusal(
        Reason.InsufficientCapacity,
        "only "
            + outcome.getInteger("claimable")
            + " machine(s) of "
            + String.join(", ", outcome.getJsonArray("shapes").getList())
            + labelled
            + kubelets
            + " can be had now; minCount is "
            + spec.minCount(),
        null,
        details);
  }
}
