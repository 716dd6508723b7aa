package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.Ids;
import io.warmmetal.api.crypto.SecretBox;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import io.warmmetal.api.http.Json;
import io.warmmetal.api.instances.InstanceJson;
import io.warmmetal.api.instances.InstanceQueries;
import io.warmmetal.api.lifecycle.LaunchResult;
import io.warmmetal.api.lifecycle.LaunchSpec;
import io.warmmetal.api.metrics.FleetMetrics;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The RunInstances transaction: record the launch (the idempotency key), claim machines with
 * {@code FOR UPDATE SKIP LOCKED} so concurrent launches neither share a machine nor wait for each other, and in one
 * statement bind instances, queue their join commands and record the events. Below {@code minCount} nothing is kept.
 */
final class Launcher {
  private final Vertx vertx;
  private final Pool db;
  private final SecretBox secrets;
  private final FleetMetrics metrics;

  /** What the worker thread computes before the transaction: crypto stays off the event loop. */
  private record Prepared(String launchId, byte[] requestHash, byte[] sealedSecrets) {}

  private record Claimed(String machineId, String shape, String state, String address) {}

  Launcher(Vertx vertx, Pool db, SecretBox secrets, FleetMetrics metrics) {
    this.vertx = vertx;
    this.db = db;
    this.secrets = secrets;
    this.metrics = metrics;
  }

  Future<LaunchResult> launch(LaunchSpec spec) {
    long started = System.nanoTime();
    return vertx.executeBlocking(() -> prepare(spec), false)
        .compose(p -> Tx.run(db, tx -> resolveShapes(tx, spec.shapes())
            .compose(shapes -> recordLaunch(tx, spec, p)
                .compose(existing -> existing != null
                    ? Future.succeededFuture(new LaunchResult(existing, true))
                    : claimAndBind(tx, spec, p, shapes).map(l -> new LaunchResult(l, false))))))
        .recover(err -> err instanceof ApiError e && e.code() == ErrorCode.InsufficientCapacity
            ? availability(spec, e) : Future.failedFuture(err))
        .onComplete(ar -> metrics.launchFinished(System.nanoTime() - started,
            ar.succeeded() ? (ar.result().replayed() ? "replayed" : "launched")
                : ar.cause() instanceof ApiError e ? e.code().name() : "error"));
  }

  private Prepared prepare(LaunchSpec spec) {
    String launchId = Ids.launchId();
    byte[] hash = Ids.sha256(CanonicalJson.encode(spec.idempotencyView()));
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
    return new Prepared(launchId, hash, sealed);
  }

  /** Shape names for the requested names or aliases, in order; a 400 if none of them exists. */
  private static Future<List<String>> resolveShapes(SqlConnection tx, List<String> requested) {
    return tx.preparedQuery("SELECT name, alias FROM shapes WHERE name = ANY($1) OR alias = ANY($1)")
        .execute(Tuple.of(requested.toArray(String[]::new)))
        .map(rows -> {
          LinkedHashSet<String> names = new LinkedHashSet<>();
          for (String want : requested) {
            for (Row r : rows) {
              if (want.equals(r.getString("name")) || want.equals(r.getString("alias"))) {
                names.add(r.getString("name"));
              }
            }
          }
          if (names.isEmpty()) {
            throw ApiError.invalid(requested.size() == 1 ? "shape" : "shapes",
                "no such shape: " + String.join(", ", requested) + " (GET /v1/shapes lists them)");
          }
          return new ArrayList<>(names);
        });
  }

  /**
   * Inserts the launch row. With a client token already used by this caller, returns that launch if the parameters
   * match (a retry) or fails with IdempotentParameterMismatch; a concurrent retry waits on the unique index until
   * the first commits or rolls back.
   */
  private static Future<JsonObject> recordLaunch(SqlConnection tx, LaunchSpec spec, Prepared p) {
    return tx.preparedQuery("""
            INSERT INTO launches (id, caller, client_token, request_hash) VALUES ($1, $2, $3, $4)
            ON CONFLICT (caller, client_token) DO NOTHING RETURNING id""")
        .execute(Tuple.of(p.launchId, spec.caller().tokenId(), spec.clientToken(), Buffer.buffer(p.requestHash)))
        .compose(rows -> rows.size() == 1 ? Future.succeededFuture(null) : replay(tx, spec, p));
  }

  private static Future<JsonObject> replay(SqlConnection tx, LaunchSpec spec, Prepared p) {
    return tx.preparedQuery("SELECT id, request_hash FROM launches WHERE caller = $1 AND client_token = $2")
        .execute(Tuple.of(spec.caller().tokenId(), spec.clientToken()))
        .compose(rows -> {
          Row launch = rows.iterator().next();
          if (!Arrays.equals(launch.getBuffer("request_hash").getBytes(), p.requestHash)) {
            throw new ApiError(ErrorCode.IdempotentParameterMismatch, "clientToken '" + spec.clientToken()
                + "' was used by an earlier launch with different parameters", "clientToken", null);
          }
          String id = launch.getString("id");
          return InstanceQueries.ofLaunch(tx, id).map(instances -> launchJson(id, spec, instances));
        });
  }

  private Future<JsonObject> claimAndBind(SqlConnection tx, LaunchSpec spec, Prepared p, List<String> shapes) {
    String[] states = spec.allowPreparing() ? new String[] {"warm", "preparing"} : new String[] {"warm"};
    return tx.preparedQuery("""
            SELECT id, shape, state, address FROM machines
            WHERE shape = ANY($1) AND state = ANY($2) AND NOT cordoned AND instance_id IS NULL
            ORDER BY array_position($1, shape), state <> 'warm', seq
            LIMIT $3
            FOR UPDATE SKIP LOCKED""")
        .execute(Tuple.of(shapes.toArray(String[]::new), states, spec.maxCount()))
        .compose(rows -> {
          List<Claimed> claimed = new ArrayList<>();
          rows.forEach(r -> claimed.add(new Claimed(r.getString("id"), r.getString("shape"), r.getString("state"),
              r.getString("address"))));
          if (claimed.size() < spec.minCount()) {
            throw new ApiError(ErrorCode.InsufficientCapacity, "only " + claimed.size() + " machine(s) of "
                + String.join(", ", shapes) + " can be had now; minCount is " + spec.minCount(), null,
                new JsonObject().put("shapes", new JsonArray(shapes)));
          }
          return bind(tx, spec, p, claimed);
        });
  }

  private Future<JsonObject> bind(SqlConnection tx, LaunchSpec spec, Prepared p, List<Claimed> claimed) {
    int n = claimed.size();
    String[] machineIds = new String[n];
    String[] instanceIds = new String[n];
    String[] shapes = new String[n];
    String[] states = new String[n];
    String[] commandIds = new String[n];
    for (int i = 0; i < n; i++) {
      Claimed c = claimed.get(i);
      machineIds[i] = c.machineId;
      instanceIds[i] = Ids.instanceId();
      shapes[i] = c.shape;
      states[i] = c.state;
      commandIds[i] = Ids.commandId();
    }
    JsonObject publicJoin = InstanceJson.publicJoin(spec.kubernetes());
    JsonObject labels = spec.labels() == null ? new JsonObject() : spec.labels();
    Tuple args = Tuple.wrap(new Object[] {machineIds, instanceIds, shapes, states, commandIds, p.launchId, labels,
        publicJoin, p.sealedSecrets == null ? null : Buffer.buffer(p.sealedSecrets), spec.userData() != null});
    return tx.preparedQuery(BIND_SQL).execute(args).map(rows -> {
      String createdAt = Json.time(rows.iterator().next().getOffsetDateTime("created_at"));
      JsonArray instances = new JsonArray();
      for (int i = 0; i < n; i++) {
        metrics.claimed(shapes[i]);
        instances.add(new JsonObject()
            .put("id", instanceIds[i])
            .put("launchId", p.launchId)
            .put("machineId", machineIds[i])
            .put("shape", shapes[i])
            .put("state", "pending")
            .put("stateReason", null)
            .put("address", claimed.get(i).address)
            .put("providerId", InstanceJson.providerId(machineIds[i]))
            .put("labels", labels)
            .put("kubernetes", publicJoin)
            .put("hasUserData", spec.userData() != null)
            .put("createdAt", createdAt)
            .put("runningAt", null)
            .put("terminatedAt", null));
      }
      return launchJson(p.launchId, spec, instances);
    });
  }

  /**
   * Binds claimed machines to new instances: warm machines start joining, machines still preparing keep preparing
   * and join once ready; each gets its join command; every change is an event.
   */
  private static final String BIND_SQL = """
      WITH input AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
          AS t(machine_id, instance_id, shape, prev_state, command_id)
      ), bound AS (
        UPDATE machines m SET instance_id = input.instance_id,
          state = CASE WHEN m.state = 'warm' THEN 'joining' ELSE m.state END,
          state_changed_at = CASE WHEN m.state = 'warm' THEN now() ELSE m.state_changed_at END
        FROM input WHERE m.id = input.machine_id
        RETURNING m.id
      ), launched AS (
        INSERT INTO instances (id, launch_id, machine_id, shape, state, labels, kubernetes, secrets, has_user_data)
        SELECT instance_id, $6, machine_id, shape, 'pending', $7, $8, $9, $10 FROM input
        RETURNING id
      ), queued AS (
        INSERT INTO commands (id, machine_id, instance_id, type, status)
        SELECT command_id, machine_id, instance_id, 'join', 'queued' FROM input
        RETURNING id
      ), recorded AS (
        INSERT INTO events (type, subject, machine_id, instance_id, from_state, to_state, reason)
        SELECT 'InstanceState', instance_id, machine_id, instance_id, NULL, 'pending', 'launched' FROM input
        UNION ALL
        SELECT 'MachineState', machine_id, machine_id, instance_id, 'warm', 'joining', 'claimed' FROM input
          WHERE prev_state = 'warm'
        UNION ALL
        SELECT 'CommandQueued', command_id, machine_id, instance_id, NULL, 'queued', 'join' FROM input
        RETURNING seq
      )
      SELECT now() AS created_at""";

  private static JsonObject launchJson(String launchId, LaunchSpec spec, JsonArray instances) {
    return new JsonObject().put("launchId", launchId).put("clientToken", spec.clientToken())
        .put("instances", instances);
  }

  /** After a refused launch (nothing claimed), tells the caller what is available now. */
  private Future<LaunchResult> availability(LaunchSpec spec, ApiError refused) {
    List<String> shapes = refused.details().getJsonArray("shapes").getList();
    return db.preparedQuery("""
            SELECT shape, count(*) FILTER (WHERE state = 'warm') AS warm,
                   count(*) FILTER (WHERE state = 'preparing') AS preparing
            FROM machines WHERE shape = ANY($1) AND NOT cordoned AND instance_id IS NULL GROUP BY shape""")
        .execute(Tuple.of(shapes.toArray(String[]::new)))
        .compose(rows -> {
          JsonObject available = new JsonObject();
          for (String s : shapes) {
            available.put(s, new JsonObject().put("warm", 0).put("preparing", 0));
          }
          for (Row r : rows) {
            available.put(r.getString("shape"),
                new JsonObject().put("warm", r.getLong("warm")).put("preparing", r.getLong("preparing")));
          }
          JsonObject details = new JsonObject().put("minCount", spec.minCount()).put("available", available)
              .put("allowPreparing", spec.allowPreparing());
          return Future.failedFuture(new ApiError(ErrorCode.InsufficientCapacity, refused.getMessage(), null,
              details));
        });
  }
}
