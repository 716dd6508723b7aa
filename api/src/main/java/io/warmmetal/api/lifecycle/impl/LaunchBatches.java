package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.metrics.FleetMetrics;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Sends launches to the database in batches: one {@code launch_instances_batch} call, one
 * transaction, for every launch that arrived while earlier ones were in the database (migration
 * {@code R__launch_instances.sql}). With at most {@code inFlight} calls running, a lone launch goes
 * at once and a busy API's launches share their statements and their commit — the writes per launch
 * stay, the work per statement and per commit is shared.
 *
 * <p>A request's outcome is the function's answer for it ({@code launched}, {@code replayed},
 * {@code mismatch}, {@code insufficient}, {@code no-such-shape}); one request never fails another.
 * If the database refuses a whole batch (an error is raised, so nothing of it was written), each of
 * its requests is tried again on its own; if the connection is lost instead, the batch may have
 * committed, so its requests fail (a retry with the same client token then replays, never repeats,
 * the launch).
 */
final class LaunchBatches {
  private static final String BATCH_SQL =
      "SELECT launch_instances_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,"
          + " $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) AS outcomes";

  /**
   * Batches are ordered by (project, client token), the launch rows' key (whichever caller sends
   * it): two batches then wait for each other's rows in the same order, never in opposite ones.
   * Ties keep their arrival order.
   */
  private static final Comparator<Request> LOCK_ORDER =
      Comparator.comparing(Request::project)
          .thenComparing(Request::clientToken, Comparator.nullsLast(Comparator.naturalOrder()));

  private final Pool db;
  private final int maxBatch;
  private final int maxInFlight;
  private final Observer observer;
  private final ArrayDeque<Pending> queue = new ArrayDeque<>();
  private int inFlight;

  /**
   * A launch as the function takes it. {@code instanceIds}, {@code joinIds} and {@code prepareIds}
   * hold {@code max} ids each ({@code prepareIds} may hold nulls when the launch may not take
   * standby machines).
   */
  record Request(
      String launchId,
      String project,
      String caller,
      String clientToken,
      byte[] requestHash,
      List<String> shapes,
      boolean allowPreparing,
      int min,
      int max,
      JsonObject labels,
      JsonObject kubernetes,
      byte[] secrets,
      boolean hasUserData,
      boolean allowStandby,
      JsonObject machineLabels,
      String[] instanceIds,
      String[] joinIds,
      String[] prepareIds,
      boolean standby,
      boolean allowPreJoined) {}

  private record Pending(Request request, Promise<JsonObject> outcome, long queuedAt) {}

  /**
   * Told what the batching does (the API's metrics). Called on the sending or the completing
   * thread.
   */
  interface Observer {
    /** A call with {@code waitedNanos.length} launches went out; each waited that long for it. */
    void sent(long[] waitedNanos);

    /** A call came back (committed or failed) {@code nanos} after it went out. */
    void returned(long nanos);
  }

  /** Calls' sizes, launches' waits for a call, and calls' durations as the API's metrics. */
  static Observer reportingTo(FleetMetrics metrics) {
    return new Observer() {
      @Override
      public void sent(long[] waitedNanos) {
        metrics.launchBatchSent(waitedNanos.length);
        for (long waited : waitedNanos) {
          metrics.launchStage("queued", waited);
        }
      }

      @Override
      public void returned(long nanos) {
        metrics.launchStage("database", nanos);
      }
    };
  }

  /**
   * @param maxBatch the most launches one call carries
   * @param maxInFlight the most calls running at once; launches arriving meanwhile wait for the
   *     next batch
   * @param observer told each call's size, its launches' waits and its duration
   */
  LaunchBatches(Pool db, int maxBatch, int maxInFlight, Observer observer) {
    this.db = db;
    this.maxBatch = maxBatch;
    this.maxInFlight = maxInFlight;
    this.observer = observer;
  }

  /** The function's outcome for this launch, once its batch has committed. */
  Future<JsonObject> submit(Request request) {
    Promise<JsonObject> outcome = Promise.promise();
    List<Pending> batch;
    synchronized (this) {
      queue.add(new Pending(request, outcome, System.nanoTime()));
      batch = nextBatch();
    }
    send(batch);
    return outcome.future();
  }

  /** Under the lock: the next batch to send, or null when none may go now. */
  private List<Pending> nextBatch() {
    if (queue.isEmpty() || inFlight >= maxInFlight) {
      return null;
    }
    inFlight++;
    List<Pending> batch = new ArrayList<>(Math.min(queue.size(), maxBatch));
    while (!queue.isEmpty() && batch.size() < maxBatch) {
      batch.add(queue.poll());
    }
    return batch;
  }

  private void send(List<Pending> batch) {
    if (batch == null) {
      return;
    }
    batch.sort(Comparator.comparing(Pending::request, LOCK_ORDER));
    long sentAt = System.nanoTime();
    observer.sent(batch.stream().mapToLong(p -> sentAt - p.queuedAt).toArray());
    execute(batch)
        .onComplete(
            ar -> {
              observer.returned(System.nanoTime() - sentAt);
              List<Pending> next;
              synchronized (this) {
                inFlight--;
                next = nextBatch();
              }
              if (ar.succeeded()) {
                List<JsonObject> outcomes = ar.result();
                for (int i = 0; i < batch.size(); i++) {
                  batch.get(i).outcome.complete(outcomes.get(i));
                }
              } else if (batch.size() > 1 && refusedByTheStatement(ar.cause())) {
                batch.forEach(
                    p -> execute(List.of(p)).map(alone -> alone.get(0)).onComplete(p.outcome));
              } else {
                batch.forEach(p -> p.outcome.fail(ar.cause()));
              }
              send(next);
            });
  }

  /**
   * The call's statement failed, so its transaction rolled back and nothing of the batch was
   * written: its launches may go again. Not so for a lost connection or a server going down
   * (SQLSTATE classes 08, 57, 58), after which the batch may have committed.
   */
  private static boolean refusedByTheStatement(Throwable failure) {
    if (!(failure instanceof PgException pg) || pg.getSqlState() == null) {
      return false;
    }
    String sqlClass = pg.getSqlState().substring(0, Math.min(2, pg.getSqlState().length()));
    return !sqlClass.equals("08") && !sqlClass.equals("57") && !sqlClass.equals("58");
  }

  private Future<List<JsonObject>> execute(List<Pending> batch) {
    try {
      return call(batch);
    } catch (
        RuntimeException e) { // never leave a launch waiting, nor the call counted as in flight
      return Future.failedFuture(e);
    }
  }

  private Future<List<JsonObject>> call(List<Pending> batch) {
    int n = batch.size();
    String[] launchIds = new String[n];
    String[] projects = new String[n];
    String[] callers = new String[n];
    String[] tokens = new String[n];
    Buffer[] hashes = new Buffer[n];
    JsonArray[] shapes = new JsonArray[n];
    Boolean[] allowPreparing = new Boolean[n];
    Integer[] mins = new Integer[n];
    Integer[] maxes = new Integer[n];
    JsonObject[] labels = new JsonObject[n];
    JsonObject[] kubernetes = new JsonObject[n];
    Buffer[] secrets = new Buffer[n];
    Boolean[] hasUserData = new Boolean[n];
    Boolean[] allowStandby = new Boolean[n];
    JsonObject[] machineLabels = new JsonObject[n];
    Boolean[] standby = new Boolean[n];
    Boolean[] allowPreJoined = new Boolean[n];
    List<String> instanceIds = new ArrayList<>();
    List<String> joinIds = new ArrayList<>();
    List<String> prepareIds = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Request r = batch.get(i).request;
      launchIds[i] = r.launchId();
      projects[i] = r.project();
      callers[i] = r.caller();
      tokens[i] = r.clientToken();
      hashes[i] = Buffer.buffer(r.requestHash());
      shapes[i] = new JsonArray(r.shapes());
      allowPreparing[i] = r.allowPreparing();
      mins[i] = r.min();
      maxes[i] = r.max();
      labels[i] = r.labels();
      kubernetes[i] = r.kubernetes();
      secrets[i] = r.secrets() == null ? null : Buffer.buffer(r.secrets());
      hasUserData[i] = r.hasUserData();
      allowStandby[i] = r.allowStandby();
      machineLabels[i] = r.machineLabels();
      standby[i] = r.standby();
      allowPreJoined[i] = r.allowPreJoined();
      instanceIds.addAll(Arrays.asList(r.instanceIds()));
      joinIds.addAll(Arrays.asList(r.joinIds()));
      prepareIds.addAll(Arrays.asList(r.prepareIds()));
    }
    Tuple args =
        Tuple.wrap(
            new Object[] {
              launchIds,
              callers,
              tokens,
              hashes,
              shapes,
              allowPreparing,
              mins,
              maxes,
              labels,
              kubernetes,
              secrets,
              hasUserData,
              allowStandby,
              machineLabels,
              instanceIds.toArray(String[]::new),
              joinIds.toArray(String[]::new),
              prepareIds.toArray(String[]::new),
              projects,
              standby,
              allowPreJoined
            });
    return db.preparedQuery(BATCH_SQL)
        .execute(args)
        .map(
            rows -> {
              Row row = rows.iterator().next();
              List<JsonObject> outcomes = new ArrayList<>(n);
              for (Object o : row.getArrayOfJsonObjects("outcomes")) {
                outcomes.add((JsonObject) o);
              }
              return outcomes;
            });
  }
}
