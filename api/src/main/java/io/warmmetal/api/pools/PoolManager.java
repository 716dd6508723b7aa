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
 * Keeps every pool at its target: reconciles on a timer and soon after anything that changes the counts (a launch,
 * a termination, an agent's hello — told by the lifecycle's after-commit hook — or a new target). One pass at a
 * time per replica, at most one each {@link #SPACING}; passes asked for meanwhile fold into one more.
 *
 * <p>A pass is "decide over a snapshot, then apply": {@code PoolPlanner} decides, the lifecycle carries out the
 * state part in the pass's transaction, then {@link StandbyPower} the power part.
 */
public final class PoolManager {
  private static final Logger LOG = LoggerFactory.getLogger(PoolManager.class);

  /** The least time between the starts of two passes. */
  static final Duration SPACING = Duration.ofMillis(200);

  private final Vertx vertx;
  private final Lifecycle lifecycle;
  private final Duration interval;
  private final StandbyPower standby;
  private final AtomicBoolean running = new AtomicBoolean();
  private final AtomicBoolean again = new AtomicBoolean();
  /** A pass a second fails while the database is down: one line per burst. */
  private final OutageLog outage = new OutageLog(LOG, "Pool reconciliation failed, database unavailable", "passes",
      Duration.ofSeconds(60));
  private long timer = -1;

  /** {@code power}: how the standby tier switches machines (their power control). */
  public PoolManager(Vertx vertx, Pool db, Lifecycle lifecycle, MachinePower power, Duration interval) {
    this.standby = new StandbyPower(db, power);
    this.vertx = vertx;
    this.lifecycle = lifecycle;
    this.interval = interval;
  }

  public void start() {
    lifecycle.onCommit(committed -> {
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
   * Asks for a pass soon: at once if none ran in the last {@link #SPACING}, else that long after the last began. A
   * burst of launches, each of which nudges, so costs the database a few passes a second, not one per commit (a pass
   * reads every pooled machine).
   */
  public void nudge() {
    if (!running.compareAndSet(false, true)) {
      again.set(true);
      return;
    }
    long started = System.nanoTime();
    pass()
        .onFailure(err -> {
          if (!outage.ifTransient(err)) {
            LOG.warn("Pool reconciliation failed: {}", err.getMessage());
          }
        })
        .onComplete(ar -> {
          if (!again.getAndSet(false)) {
            running.set(false);
            return;
          }
          long waitMs = SPACING.toMillis() - (System.nanoTime() - started) / 1_000_000;
          vertx.setTimer(Math.max(1, waitMs), id -> {
            running.set(false);
            nudge();
          });
        });
  }

}
