package io.warmmetal.api.pools;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.warmmetal.api.lifecycle.Lifecycle;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps every pool at its target: reconciles on a timer and soon after anything that changes the counts (a launch,
 * a termination, an agent's hello — told by the lifecycle's after-commit hook — or a new target). One pass at a
 * time per replica; passes asked for while one runs fold into one more.
 */
public final class PoolManager {
  private static final Logger LOG = LoggerFactory.getLogger(PoolManager.class);

  private final Vertx vertx;
  private final Lifecycle lifecycle;
  private final Duration interval;
  private final Supplier<Future<Void>> afterPass;
  private final AtomicBoolean running = new AtomicBoolean();
  private final AtomicBoolean again = new AtomicBoolean();
  private long timer = -1;

  /** {@code afterPass}: what follows each pass (the standby tier's power switching). */
  public PoolManager(Vertx vertx, Lifecycle lifecycle, Duration interval, Supplier<Future<Void>> afterPass) {
    this.afterPass = afterPass;
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

  /** Asks for a pass soon. */
  public void nudge() {
    if (!running.compareAndSet(false, true)) {
      again.set(true);
      return;
    }
    lifecycle.reconcilePools()
        .compose(x -> afterPass.get())
        .onFailure(err -> LOG.warn("Pool reconciliation failed: {}", err.getMessage()))
        .onComplete(ar -> {
          running.set(false);
          if (again.getAndSet(false)) {
            nudge();
          }
        });
  }
}
