package io.warmmetal.controller.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.protocol.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The queue's promises: once per key however often added, never twice at once, retried. */
class WorkQueueTest {

  @Test
  void aKeyAddedManyTimesBeforeItsTurnIsReconciledOnce() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    try (WorkQueue<String> queue =
        new WorkQueue<>(
            "test",
            1,
            Duration.ofMillis(10),
            Duration.ofSeconds(1),
            key -> {
              if (key.equals("blocker")) {
                release.await();
              }
              runs.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
              return null;
            })) {
      queue.add("blocker"); // the one worker is busy: the rest wait their turn
      for (int i = 0; i < 50; i++) {
        queue.add("claim-a");
        queue.add("claim-b");
      }
      release.countDown();
      Await.until("all reconciled", () -> queue.depth() == 0 && queue.reconciled() == 3);
      assertThat(runs.get("claim-a")).hasValue(1);
      assertThat(runs.get("claim-b")).hasValue(1);
    }
  }

  @Test
  void aKeyAddedWhileUnderWayRunsAgainAfterNeverBeside() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger concurrent = new AtomicInteger();
    List<Integer> seen = new CopyOnWriteArrayList<>();
    AtomicInteger runs = new AtomicInteger();
    try (WorkQueue<String> queue =
        new WorkQueue<>(
            "test",
            4,
            Duration.ofMillis(10),
            Duration.ofSeconds(1),
            key -> {
              seen.add(concurrent.incrementAndGet());
              if (runs.incrementAndGet() == 1) {
                inside.countDown();
                release.await();
              }
              concurrent.decrementAndGet();
              return null;
            })) {
      queue.add("claim-a");
      assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
      queue.add("claim-a"); // changed while being reconciled: once more, after
      queue.add("claim-a");
      release.countDown();
      Await.until("run twice", () -> queue.reconciled() == 2 && queue.depth() == 0);
      assertThat(runs).hasValue(2);
      assertThat(seen).containsOnly(1); // four workers, yet never two of one key at once
    }
  }

  @Test
  void aFailingReconcileIsRetriedWithGrowingDelaysAndAskedDelaysAreKept() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    try (WorkQueue<String> queue =
        new WorkQueue<>(
            "test",
            2,
            Duration.ofMillis(5),
            Duration.ofMillis(40),
            key -> {
              int n = attempts.incrementAndGet();
              if (n <= 3) {
                throw new IllegalStateException("not yet " + n);
              }
              return n == 4 ? Duration.ofMillis(20) : null; // once more, later, then done
            })) {
      assertThat(queue.backoff(1)).isEqualTo(Duration.ofMillis(5));
      assertThat(queue.backoff(3)).isEqualTo(Duration.ofMillis(20));
      assertThat(queue.backoff(10)).isEqualTo(Duration.ofMillis(40));
      queue.add("claim-a");
      Await.until("three failures, a success and the run it asked for", () -> attempts.get() == 5);
      Await.until("idle", () -> queue.depth() == 0 && queue.reconciled() == 5);
    }
  }
}
