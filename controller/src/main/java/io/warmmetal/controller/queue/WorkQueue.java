package io.warmmetal.controller.queue;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keyed work with bounded concurrency, as client-go's workqueue under controller-runtime (and
 * Strimzi's {@code ControllerQueue}): a key added many times before its turn is reconciled once;
 * one key is never reconciled twice at once — added while under way, it runs again after; a
 * reconcile that throws is retried with exponential backoff; one may ask to run again after a
 * delay. Workers are threads of their own: reconcilers may block on the network.
 *
 * @param <K> what identifies an object (a NodeClaim's name)
 */
public final class WorkQueue<K> implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WorkQueue.class);

  /** One object's reconcile: returns when to look again (null: only when told). */
  @FunctionalInterface
  public interface Reconciler<K> {
    Duration reconcile(K key) throws Exception;
  }

  /** Told of every reconcile: how long it took and how it ended (controller-runtime's metrics). */
  @FunctionalInterface
  public interface Observer {
    Observer NONE = (queue, took, result) -> {};

    /**
     * @param result success, error or requeue_after (looked at again after a delay)
     */
    void reconciled(String queue, Duration took, String result);
  }

  private final String name;
  private final Reconciler<K> reconciler;
  private final Observer observer;
  private final Duration baseDelay;
  private final Duration maxDelay;
  private final ExecutorService workers;
  private final ScheduledExecutorService timer;

  /** Keys waiting for a worker. */
  private final Set<K> queued = new HashSet<>();

  /** Keys a worker is reconciling now. */
  private final Set<K> running = new HashSet<>();

  /** Keys added while running: to run again when done. */
  private final Set<K> dirty = new HashSet<>();

  private final Map<K, Integer> failures = new HashMap<>();
  private final AtomicLong reconciled = new AtomicLong();

  /**
   * @param workers how many keys are reconciled at once
   * @param baseDelay the first retry's delay after a failure (doubling, up to {@code maxDelay})
   */
  public WorkQueue(
      String name, int workers, Duration baseDelay, Duration maxDelay, Reconciler<K> reconciler) {
    this(name, workers, baseDelay, maxDelay, reconciler, Observer.NONE);
  }

  /**
   * @param observer told of each reconcile
   */
  public WorkQueue(
      String name,
      int workers,
      Duration baseDelay,
      Duration maxDelay,
      Reconciler<K> reconciler,
      Observer observer) {
    this.name = name;
    this.reconciler = reconciler;
    this.observer = observer;
    this.baseDelay = baseDelay;
    this.maxDelay = maxDelay;
    this.workers = Executors.newFixedThreadPool(workers, threads(name));
    this.timer = Executors.newSingleThreadScheduledExecutor(threads(name + "-timer"));
  }

  private static ThreadFactory threads(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** Reconciles the key soon (once, however often it is added before its turn). */
  public void add(K key) {
    synchronized (this) {
      if (running.contains(key)) {
        dirty.add(key);
        return;
      }
      if (!queued.add(key)) {
        return;
      }
    }
    try {
      workers.execute(() -> run(key));
    } catch (RejectedExecutionException closed) {
      synchronized (this) {
        queued.remove(key);
      }
    }
  }

  /** Reconciles the key after {@code delay}. */
  public void addAfter(K key, Duration delay) {
    if (delay.isZero() || delay.isNegative()) {
      add(key);
      return;
    }
    try {
      timer.schedule(() -> add(key), delay.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException closed) {
      // closed: nothing more runs
    }
  }

  /** Keys waiting or under way: what a test or a metric reads as the queue's depth. */
  public synchronized int depth() {
    return queued.size() + running.size();
  }

  /** Reconciles finished (well or not) since the start. */
  public long reconciled() {
    return reconciled.get();
  }

  private void run(K key) {
    synchronized (this) {
      queued.remove(key);
      running.add(key);
    }
    Duration again = null;
    long start = System.nanoTime();
    String result = "success";
    try {
      again = reconciler.reconcile(key);
      synchronized (this) {
        failures.remove(key);
      }
      if (again != null) {
        result = "requeue_after";
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      result = "error";
      int failed;
      synchronized (this) {
        failed = failures.merge(key, 1, Integer::sum);
      }
      again = backoff(failed);
      LOG.warn("{} {}: {} (again in {})", name, key, e.toString(), again);
    } finally {
      observer.reconciled(name, Duration.ofNanos(System.nanoTime() - start), result);
      reconciled.incrementAndGet();
      boolean rerun;
      synchronized (this) {
        running.remove(key);
        rerun = dirty.remove(key);
      }
      if (rerun) {
        add(key);
      }
    }
    if (again != null) {
      addAfter(key, again);
    }
  }

  /** The delay before the {@code failed}-th retry: doubling from the base, up to the max. */
  Duration backoff(int failed) {
    long factor = 1L << Math.min(failed - 1, 20);
    Duration delay = baseDelay.multipliedBy(factor);
    return delay.compareTo(maxDelay) > 0 ? maxDelay : delay;
  }

  @Override
  public void close() {
    timer.shutdownNow();
    workers.shutdownNow();
    try {
      // A reconcile under way finishes first: one that wrote after close would surprise its caller.
      workers.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
