package io.warmmetal.api.channel;

import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.Ids;
import io.warmmetal.api.http.OutageLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Announces committed commands (the channel subscribes it to the lifecycle's after-commit hook): at
 * once to the agents this replica holds, and to the other replicas with a NOTIFY sent after the
 * commit, coalesced (while one is in flight the next batch gathers). The NOTIFY is deliberately not
 * part of the transaction that queued the command: PostgreSQL serializes the commits of notifying
 * transactions behind one lock held across their WAL flush, which capped launches at the speed of
 * one fsync at a time.
 *
 * <p>A payload is {@code <replica>:<machine>,<machine>,...}; a replica ignores its own.
 */
final class CommandAnnouncer {
  private static final Logger LOG = LoggerFactory.getLogger(CommandAnnouncer.class);
  private static final OutageLog OUTAGE =
      new OutageLog(
          LOG,
          "Announcing commands failed, database unavailable (their catch-up will find them)",
          "announcements",
          Duration.ofSeconds(60));

  /** PostgreSQL's payload limit is 8000 bytes; machine ids are ASCII. */
  private static final int MAX_PAYLOAD = 7900;

  private final Pool db;
  private final String replica = Ids.random("replica-", 12);
  private final Set<String> pending = new LinkedHashSet<>();
  private volatile Consumer<String> local = id -> {};
  private boolean flushing;

  CommandAnnouncer(Pool db) {
    this.db = db;
  }

  /** Where this replica's own announcements go (the agent channel's sessions). */
  void onLocal(Consumer<String> handler) {
    this.local = handler;
  }

  /** Machines with commands committed just now. */
  void commandsQueued(Collection<String> machineIds) {
    if (machineIds.isEmpty()) {
      return;
    }
    machineIds.forEach(local);
    synchronized (this) {
      pending.addAll(machineIds);
      if (flushing) {
        return;
      }
      flushing = true;
    }
    flush();
  }

  /** The machine ids in another replica's payload; empty for this replica's own. */
  List<String> fromOthers(String payload) {
    int colon = payload.indexOf(':');
    if (colon < 0 || payload.substring(0, colon).equals(replica)) {
      return List.of();
    }
    return List.of(payload.substring(colon + 1).split(","));
  }

  private void flush() {
    List<String> payloads;
    synchronized (this) {
      if (pending.isEmpty()) {
        flushing = false;
        return;
      }
      payloads = payloads(pending);
      pending.clear();
    }
    db.preparedQuery("SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload")
        .execute(
            Tuple.of(AgentChannel.NOTIFY_CHANNEL).addArrayOfString(payloads.toArray(String[]::new)))
        .onFailure(
            err -> {
              if (!OUTAGE.ifTransient(err)) {
                LOG.warn(
                    "Announcing commands to other replicas failed ({}); their catch-up will find them",
                    err.getMessage());
              }
            })
        .onComplete(ar -> flush());
  }

  List<String> payloads(Collection<String> machineIds) {
    List<String> payloads = new ArrayList<>();
    StringBuilder current = new StringBuilder(replica).append(':');
    int empty = current.length();
    for (String id : machineIds) {
      if (current.length() > empty && current.length() + 1 + id.length() > MAX_PAYLOAD) {
        payloads.add(current.toString());
        current.setLength(empty);
      }
      if (current.length() > empty) {
        current.append(',');
      }
      current.append(id);
    }
    payloads.add(current.toString());
    return payloads;
  }
}
