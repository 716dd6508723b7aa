package io.warmmetal.api.channel;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.ServerWebSocketHandshake;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.pubsub.PgSubscriber;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.SecretBox;
import io.warmmetal.api.http.OutageLog;
import io.warmmetal.api.lifecycle.Lifecycle;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The push channel to agents on this replica. Commands are durable in PostgreSQL; the lifecycle's
 * after-commit hook tells the {@link CommandAnnouncer} of each commit that queued some, which
 * pushes them at once to the agents held here and tells other replicas with {@code NOTIFY
 * warmmetal_commands}. A replica catches up with a query for every connected agent whenever it
 * (re)subscribes, and each heartbeat interval for the agents that still have queued commands (a
 * replica that died between commit and announcement loses nothing). Each heartbeat interval it also
 * tells the lifecycle (the owner of presence) who was heard, and asks it to sweep: silent machines
 * go offline, joins without a result time out.
 */
public final class AgentChannel {
  private static final Logger LOG = LoggerFactory.getLogger(AgentChannel.class);
  private static final OutageLog SWEEP_OUTAGE =
      new OutageLog(
          LOG, "Channel sweep failed, database unavailable", "sweeps", Duration.ofSeconds(60));
  private static final OutageLog LISTEN_OUTAGE =
      new OutageLog(
          LOG,
          "Command notifications interrupted, database unavailable",
          "connections",
          Duration.ofSeconds(60));
  static final String NOTIFY_CHANNEL = "warmmetal_commands";

  /** How often agents beat, when silence makes a machine offline, how long a join may take. */
  public record Timing(
      Duration heartbeat, Duration offlineAfter, Duration joinTimeout, Duration bootTimeout) {}

  private final Vertx vertx;
  private final Pool db;
  private final Lifecycle lifecycle;
  private final Timing timing;
  private final AgentSessions sessions = new AgentSessions();
  private final CommandDelivery delivery;
  private final ChannelEndpoint endpoint;
  private final PgSubscriber subscriber;
  private final CommandAnnouncer announcer;

  /**
   * Sweeps that ran to the end: what a test waits on to know the sweep that would have acted has
   * run.
   */
  private final AtomicLong sweeps = new AtomicLong();

  private long timer = -1;

  /**
   * The sweep under way and when it began: a tick while it runs is skipped, so that sweeps do not
   * pile up on a slow database (each holding connections, their batches of machines waiting on each
   * other's row locks) — unless it has run past the offline limit, when presence must go on
   * whatever became of it.
   */
  private Future<?> sweeping = Future.succeededFuture();

  private long sweepStarted;

  /**
   * @param setupsAtOnce how many agents may be setting up their channel at once (see {@link
   *     ChannelSetups})
   */
  public AgentChannel(
      Vertx vertx,
      Pool db,
      PgConnectOptions connect,
      Lifecycle lifecycle,
      SecretBox secrets,
      Timing timing,
      int setupsAtOnce) {
    this.vertx = vertx;
    this.announcer = new CommandAnnouncer(db);
    this.db = db;
    this.lifecycle = lifecycle;
    this.timing = timing;
    this.delivery = new CommandDelivery(vertx, db, secrets);
    this.endpoint =
        new ChannelEndpoint(
            vertx,
            db,
            lifecycle,
            sessions,
            delivery,
            timing.heartbeat(),
            new ChannelSetups(vertx, setupsAtOnce, timing.offlineAfter()));
    this.subscriber = PgSubscriber.subscriber(vertx, connect).reconnectPolicy(retries -> 500L);
  }

  public Handler<ServerWebSocketHandshake> handshakeHandler() {
    return endpoint::handshake;
  }

  public Future<Void> start() {
    announcer.onLocal(this::deliverTo);
    lifecycle.onCommit(committed -> announcer.commandsQueued(committed.commandsFor()));
    subscriber
        .channel(NOTIFY_CHANNEL)
        .handler(payload -> announcer.fromOthers(payload).forEach(this::deliverTo))
        .subscribeHandler(
            v -> {
              // Without a handler Vert.x prints the connection's failure (a restart's FATAL) as a
              // raw stack trace.
              subscriber.actualConnection().exceptionHandler(this::listenFailed);
              sessions.all().forEach(delivery::deliver); // catch up on every (re)subscribe
            });
    timer =
        vertx.setPeriodic(
            timing.heartbeat().toMillis(),
            id -> {
              long now = System.currentTimeMillis();
              if (sweeping.isComplete() || now - sweepStarted > timing.offlineAfter().toMillis()) {
                sweepStarted = now;
                sweeping = sweep();
              }
            });
    return subscriber.connect();
  }

  public Future<Void> stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    sessions.all().forEach(s -> s.close((short) 1001, "server going away"));
    return subscriber.close();
  }

  /**
   * The LISTEN connection failed; the subscriber connects again (every 500 ms) and then catches up.
   */
  private void listenFailed(Throwable err) {
    if (!LISTEN_OUTAGE.ifTransient(err)) {
      LOG.warn("Command notifications: the database connection failed: {}", err.getMessage());
    }
  }

  private void deliverTo(String machineId) {
    AgentSession session = sessions.get(machineId);
    if (session != null) {
      delivery.deliver(session);
    }
  }

  /** Held agents with queued commands get them: the catch-up for announcements that never came. */
  private Future<Void> deliverQueued(String[] held) {
    if (held.length == 0) {
      return Future.succeededFuture();
    }
    return db.preparedQuery(
            "SELECT DISTINCT machine_id FROM commands WHERE machine_id = ANY($1) AND status = 'queued'")
        .execute(Tuple.of((Object) held))
        .onSuccess(rows -> rows.forEach(r -> deliverTo(r.getString("machine_id"))))
        .mapEmpty();
  }

  /** Agents connected to this replica now. */
  public int connectedAgents() {
    return sessions.size();
  }

  /**
   * Sweeps this replica has finished (each heartbeat interval: who was heard, silent machines
   * offline, queued commands delivered, joins timed out). Tests count them: "N sweeps later, still
   * nothing" rather than "N seconds later".
   */
  public long sweepsFinished() {
    return sweeps.get();
  }

  /**
   * Deliveries this replica has finished (each read a connected agent's open commands and sent what
   * it may have).
   */
  public long deliveriesFinished() {
    return delivery.finished();
  }

  /**
   * Channels this replica refused at the handshake because the certificate is not the machine's
   * current one.
   */
  public long handshakesRefused() {
    return endpoint.refused();
  }

  private Future<?> sweep() {
    long now = System.currentTimeMillis();
    List<AgentSession> live =
        sessions.all().stream()
            .filter(
                s -> {
                  if (now - s.lastHeard > timing.offlineAfter().toMillis()) {
                    s.close(
                        (short) 1001,
                        "silent"); // a dead connection: the agent reconnects if it lives
                    return false;
                  }
                  return s.helloed;
                })
            .toList();
    // The lifecycle owns presence: it is told who was heard, and answers whose certificates are
    // still current
    // (the machine not retired). The others were re-enrolled, renewed or retired since their
    // handshake: closed.
    Map<String, String> held = new HashMap<>();
    live.forEach(s -> held.put(s.machineId, s.certSerial));
    return lifecycle
        .agentsHeard(held)
        .onSuccess(
            current ->
                live.stream()
                    .filter(s -> !current.contains(s.machineId))
                    .forEach(s -> s.close((short) 1008, "certificate replaced or machine retired")))
        .compose(
            current ->
                lifecycle
                    .markSilentOffline(timing.offlineAfter(), timing.bootTimeout())
                    .compose(x -> deliverQueued(current.toArray(String[]::new))))
        .compose(x -> lifecycle.expireJoins(timing.joinTimeout()))
        .onSuccess(x -> sweeps.incrementAndGet())
        .onFailure(
            err -> {
              if (!SWEEP_OUTAGE.ifTransient(err)) {
                LOG.warn("Channel sweep failed: {}", err.getMessage());
              }
            });
  }
}
