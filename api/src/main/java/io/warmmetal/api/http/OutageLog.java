package io.warmmetal.api.http;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.warmmetal.api.db.TransientFailures;
import java.time.Duration;
import org.slf4j.Logger;

/**
 * One WARN per burst of failures instead of a line (or a stack trace) per failure: the first
 * failure is logged with its cause's message; the ones that follow within the window are counted
 * and summarised when it ends ("N more requests failed in the last Xs"), and a window without
 * failures ends the burst. Shared by event loops.
 */
public final class OutageLog {
  private final Logger log;
  private final String what;
  private final String noun;
  private final long windowMillis;
  private boolean open;
  private Vertx timerOwner;
  private int suppressed;
  private long windowStart;

  /**
   * @param what the line's start, e.g. "database unavailable"
   * @param noun what failed, plural, e.g. "requests"
   */
  public OutageLog(Logger log, String what, String noun, Duration window) {
    this.log = log;
    this.what = what;
    this.noun = noun;
    this.windowMillis = window.toMillis();
  }

  /**
   * Logs the failure as part of a burst if a retry can outlive it; false (nothing logged) for any
   * other failure.
   */
  public boolean ifTransient(Throwable cause) {
    if (!TransientFailures.isTransient(cause)) {
      return false;
    }
    failed(cause);
    return true;
  }

  /**
   * Called on a Vert.x thread (the window's end is a timer there); elsewhere every failure is
   * logged.
   */
  public void failed(Throwable cause) {
    Context context = Vertx.currentContext();
    long now = System.currentTimeMillis();
    Vertx owner = context == null ? null : context.owner();
    synchronized (this) {
      // A window long past its end, or whose timer another Vert.x holds (one closed since, in
      // tests), lost its
      // timer: that burst is over.
      if (open && owner == timerOwner && now - windowStart < 2 * windowMillis) {
        suppressed++;
        return;
      }
      open = context != null;
      timerOwner = owner;
      suppressed = 0;
      windowStart = now;
    }
    log.warn("{}: {}", what, describe(cause));
    if (owner != null) {
      schedule(owner);
    }
  }

  private void schedule(Vertx vertx) {
    try {
      vertx.setTimer(windowMillis, id -> endWindow(vertx));
    } catch (RuntimeException closing) {
      synchronized (
          this) { // Vert.x is shutting down: no summary; the next failure opens a burst again
        open = false;
      }
    }
  }

  private void endWindow(Vertx vertx) {
    int count;
    long seconds;
    synchronized (this) {
      if (vertx != timerOwner) {
        return; // a later burst, on another Vert.x, has its own timer
      }
      count = suppressed;
      if (count == 0) {
        open = false;
        return;
      }
      long now = System.currentTimeMillis();
      seconds = Math.max(1, (now - windowStart + 500) / 1000);
      suppressed = 0;
      windowStart = now;
    }
    log.warn("{}: {} more {} failed in the last {}s", what, count, noun, seconds);
    schedule(vertx);
  }

  /** Whether a burst is open: failures now are counted into its summary, not logged. */
  synchronized boolean inBurst() {
    return open;
  }

  /** The cause's type and message, never its stack trace. */
  static String describe(Throwable cause) {
    if (cause == null) {
      return "(no cause)";
    }
    String message = cause.getMessage();
    Throwable root = cause;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String text = cause.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    return root == cause || root.getMessage() == null
        ? text
        : text + " (" + root.getMessage() + ")";
  }
}
