package io.warmmetal.api.pools;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.lifecycle.PoolDecisions;
import io.warmmetal.protocol.testing.Await;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The pool manager's scheduling alone (what a pass does is {@code PoolManagerTest}'s): a stream of
 * nudges — one per launch under load — costs a few passes a second, never overlapping, and the last
 * nudge is never lost. The lifecycle here only counts passes; each takes 10 ms.
 */
class PoolPassSpacingTest {
  private final Vertx vertx = Vertx.vertx();
  private final AtomicInteger passes = new AtomicInteger();
  private final AtomicInteger running = new AtomicInteger();
  private final AtomicInteger overlapped = new AtomicInteger();
  private final List<Long> starts = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() {
    vertx.close().await();
  }

  @Test
  void aStreamOfNudgesCostsAFewPassesASecond() throws Exception {
    PoolManager manager =
        new PoolManager(vertx, null, countingLifecycle(), null, Duration.ofHours(1));
    long start = System.nanoTime();
    for (int i = 0; i < 100; i++) { // a nudge every 10 ms for a second
      vertx.runOnContext(x -> manager.nudge());
      Thread.sleep(10);
    }
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    Await.until("the pass folded from the last nudges", manager::idle);

    // Passes start at least 200 ms apart: five a second while nudged and the one folded from the
    // last nudges —
    // where one per nudge would be about 90 here.
    long spaced = elapsedMs / PoolManager.SPACING.toMillis() + 2;
    assertThat(passes.get())
        .as("passes for 100 nudges over %d ms", elapsedMs)
        .isBetween(2, (int) spaced);
    assertThat(overlapped).as("passes running at once").hasValue(0);
  }

  @Test
  void theFirstNudgeRunsAPassAtOnce() throws Exception {
    // With an hour's spacing, a pass seen within the wait proves the nudge did not wait for a
    // spacing.
    PoolManager manager =
        new PoolManager(
            vertx, null, countingLifecycle(), null, Duration.ofHours(1), Duration.ofHours(1));
    vertx.runOnContext(x -> manager.nudge());
    Await.until("the first pass", () -> passes.get() == 1);
  }

  @Test
  void nudgesWithinTheSpacingFoldIntoOnePassThatWaitsForIt() throws Exception {
    Duration spacing = Duration.ofMillis(500);
    PoolManager manager =
        new PoolManager(vertx, null, countingLifecycle(), null, Duration.ofHours(1), spacing);
    vertx.runOnContext(x -> manager.nudge());
    Await.until("the first pass", () -> passes.get() == 1);
    for (int i = 0; i < 5; i++) {
      vertx.runOnContext(x -> manager.nudge());
    }
    Await.until("the manager idle again", () -> passes.get() >= 2 && manager.idle());
    assertThat(passes).as("passes for 6 nudges within the spacing").hasValue(2);
    assertThat(starts.get(1) - starts.get(0))
        .as("ns between the passes' starts")
        .isGreaterThanOrEqualTo(spacing.toNanos());
    assertThat(overlapped).as("passes running at once").hasValue(0);
  }

  /**
   * A lifecycle whose pool pass takes 10 ms, decides nothing, and is counted; nothing else is
   * called.
   */
  private Lifecycle countingLifecycle() {
    return (Lifecycle)
        Proxy.newProxyInstance(
            Lifecycle.class.getClassLoader(),
            new Class<?>[] {Lifecycle.class},
            (proxy, method, args) -> {
              if (!method.getName().equals("reconcilePools")) {
                throw new UnsupportedOperationException(method.getName());
              }
              passes.incrementAndGet();
              starts.add(System.nanoTime());
              if (running.incrementAndGet() > 1) {
                overlapped.incrementAndGet();
              }
              return Future.<Void>future(p -> vertx.setTimer(10, id -> p.complete()))
                  .map(
                      x -> {
                        running.decrementAndGet();
                        return new PoolDecisions(
                            List.of(), List.of(), List.of(), List.of(), List.of(), List.of());
                      });
            });
  }
}
