package io.warmmetal.api.pools;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.http.OutageLog;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.lifecycle.PoolDecisions;
import io.warmmetal.api.power.MachinePower;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps every pool at its target: reconciles on a timer and soon after anything that changes the
 * counts (a launch, a termination, an agent's hello — told by the lifecycle's after-commit hook —
 * or a new target). One pass at a time per replica, at most one each {@link #SPACING}; passes asked
 * for meanwhile fold into one more.
 *
 * <p>A pass is "decide over a snapshot, then apply": {@code PoolPlanner} decides, the lifecycle
 * carries out the state part in the pass's transaction, then {@link StandbyPower} the power part.
 */
public final class PoolManager {
  private static final Logger LOG = LoggerFactory.getLogger(PoolManager.class);

  /** The least time between the starts of two passes. */
  static final Duration SPACING = Duration.ofMillis(200);

  private final Vertx vertx;
  private final Lifecycle lifecycle;
  private final Duration interval;
  private final Duration spacing;
  private final StandbyPower standby;
  private final AtomicBoolean running = new AtomicBoolean();
  private final AtomicBoolean again = new AtomicBoolean();

  /** When the last pass began ({@link System#nanoTime()}), 0 before the first. */
  private volatile long lastStarted;

  /** A pass a second fails while the database is down: one line per burst. */
  private final OutageLog outage =
      new OutageLog(
          LOG,
          "Pool reconciliation failed, database unavailable",
          "passes",
          Duration.ofSeconds(60));

  private long timer = -1;

  /** {@code power}: how the standby tier switches machines (their power control). */
  public PoolManager(
      Vertx vertx, Pool db, Lifecycle lifecycle, MachinePower power, Duration interval) {
    this(vertx, db, lifecycle, power, interval, SPACING);
  }

  PoolManager(
      Vertx vertx,
      Pool db,
      Lifecycle lifecycle,
      MachinePower power,
      Duration interval,
      Duration spacing) {
    this.standby = new StandbyPower(db, power);
    this.vertx = vertx;
    this.lifecycle = lifecycle;
    this.interval = interval;
    this.spacing = spacing;
  }

  public void start() {
    lifecycle.onCommit(
        committed -> {
          if (committed.poolsMoved()) {
            nudge();
          }
        });
    timer = vertx.setPeriodic(0, interval.toMillis(), id -> nudge());
  }

  public void stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
      timer = -1;
    }
  }

  /** One pass now: the lifecycle applies the state decisions, then the power ones are started. */
  public Future<PoolDecisions> pass() {
    return lifecycle.reconcilePools().onSuccess(d -> standby.apply(d.powerOff(), d.powerOn()));
  }

  /**
   * Asks for a pass soon: at once if none began in the last {@link #SPACING}, else that long after
   * the last began; nudges meanwhile fold into that one pass. A burst of launches, each of which
   * nudges, so costs the database a few passes a second, not one per commit.
   */
  public void nudge() {
    if (!running.compareAndSet(false, true)) {
      again.set(true);
      return;
    }
    afterSpacing(this::run);
  }

  /**
   * Whether no pass is running or waiting for its turn (then none comes before the next nudge or
   * tick).
   */
  boolean idle() {
    return !running.get();
  }

  private void run() {
    again.set(false); // this pass covers every nudge so far
    lastStarted = System.nanoTime();
    pass()
        .onFailure(
            err -> {
              if (!outage.ifTransient(err)) {
                LOG.warn("Pool reconciliation failed: {}", err.getMessage());
              }
            })
        .onComplete(
            ar -> {
              if (!again.get()) {
                running.set(false);
                // A nudge between the test and the release found the pass running and was folded:
                // take it up.
                if (!again.get() || !running.compareAndSet(false, true)) {
                  return;
                }
              }
              afterSpacing(this::run);
            });
  }

  private void afterSpacing(Runnable action) {
    long waitMs =
        lastStarted == 0 ? 0 : spacing.toMillis() - (System.nanoTime() - lastStarted) / 1_000_000;
    if (waitMs <= 0) {
      action.run();
    } else {
      vertx.setTimer(waitMs, id -> action.run());
    }
  }
}
