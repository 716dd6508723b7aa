package io.warmmetal.api.pools;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
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
 * time per replica; passes asked for while one runs fold into one more.
 *
 * <p>A pass is "decide over a snapshot, then apply": {@code PoolPlanner} decides, the lifecycle carries out the
 * state part in the pass's transaction, then {@link StandbyPower} the power part.
 */
public final class PoolManager {
  private static final Logger LOG = LoggerFactory.getLogger(PoolManager.class);

  private final Vertx vertx;
  private final Lifecycle lifecycle;
  private final Duration interval;
  private final StandbyPower standby;
  private final AtomicBoolean running = new AtomicBoolean();
  private final AtomicBoolean again = new AtomicBoolean();
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

  /** Asks for a pass soon. */
  public void nudge() {
    if (!running.compareAndSet(false, true)) {
      again.set(true);
      return;
    }
    pass()
        .onFailure(err -> LOG.warn("Pool reconciliation failed: {}", err.getMessage()))
        .onComplete(ar -> {
          running.set(false);
          if (again.getAndSet(false)) {
            nudge();
          }
        });
  }
}
