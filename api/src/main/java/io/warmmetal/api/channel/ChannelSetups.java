package io.warmmetal.api.channel;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How many agents may be setting up their channel at once — from the WebSocket handshake (its
 * certificate looked up) to the end of its hello (presence recorded, queued commands looked up),
 * each step a database call. When a replica dies, every agent it held comes to the others at once:
 * unbounded, their set-ups would queue on the database pool ahead of every launch and answer
 * clients 503 for minutes. Beyond the bound an agent, its TLS handshake done, waits for its turn
 * (first come, first served) without touching the database; one that waits longer than {@code
 * maxWait} (the offline limit: a refused agent does its TLS handshake again, so refusing early only
 * adds work) is refused with 503 and retries after its jittered backoff. So the reconnections come
 * in as a stream the replica keeps up with, no TLS handshake is thrown away while it does, and
 * launches keep the rest of the pool.
 */
final class ChannelSetups {
  private static final Logger LOG = LoggerFactory.getLogger(ChannelSetups.class);
  private static final long LOG_EVERY_MILLIS = 60_000;

  private final Vertx vertx;
  private final int atOnce;
  private final Duration maxWait;
  private final Deque<Promise<Permit>> waiting = new ArrayDeque<>();
  private int underWay;
  private long refused;
  private long loggedAt;

  ChannelSetups(Vertx vertx, int atOnce, Duration maxWait) {
    this.vertx = vertx;
    this.atOnce = atOnce;
    this.maxWait = maxWait;
  }

  /** A permit for one set-up, now or once one ends; failed if none came within {@code maxWait}. */
  synchronized Future<Permit> begin() {
    if (underWay < atOnce) {
      underWay++;
      return Future.succeededFuture(new Permit());
    }
    Promise<Permit> turn = Promise.promise();
    waiting.add(turn);
    vertx.setTimer(maxWait.toMillis(), t -> giveUp(turn));
    return turn.future();
  }

  private void giveUp(Promise<Permit> turn) {
    boolean gaveUp;
    synchronized (this) {
      gaveUp = waiting.remove(turn);
      if (gaveUp) {
        refused++;
        long now = System.currentTimeMillis();
        if (now - loggedAt >= LOG_EVERY_MILLIS) {
          loggedAt = now;
          LOG.info(
              "Agent channels: {} set up at once, {} waiting; {} refused so far after {} s (503: they retry)",
              atOnce,
              waiting.size(),
              refused,
              maxWait.toSeconds());
        }
      }
    }
    if (gaveUp) {
      turn.fail("no turn to set up the channel within " + maxWait.toSeconds() + " s");
    }
  }

  /** Set-ups under way now. */
  synchronized int underWay() {
    return underWay;
  }

  /** Agents waiting for their turn now. */
  synchronized int waiting() {
    return waiting.size();
  }

  private void ended() {
    Promise<Permit> next;
    synchronized (this) {
      next = waiting.poll();
      if (next == null) {
        underWay--;
        return;
      }
    }
    next.complete(new Permit()); // the place passes to the agent that waited longest
  }

  /** One set-up's place; ending it twice frees it once. */
  final class Permit {
    private final AtomicBoolean ended = new AtomicBoolean();

    void end() {
      if (ended.compareAndSet(false, true)) {
        ended();
      }
    }
  }
}
