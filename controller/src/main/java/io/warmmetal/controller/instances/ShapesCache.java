package io.warmmetal.controller.instances;

import io.warmmetal.controller.cloudprovider.Catalog;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.cloudprovider.CloudProviderException.Unavailable;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each node class's instance types, read from its fleet in the background — every {@code every},
 * and at once when asked ({@link #refresh}: a launch took a machine) — so that a plan reads them
 * with no I/O. A node class not asked about for {@link #FORGET_AFTER} is no longer read. Whoever
 * plans is told ({@code onChange}) when what a node class offers changes, or is first known. While
 * its fleet cannot answer, the last good read stands in for {@link #STALE_FOR}.
 */
final class ShapesCache implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ShapesCache.class);
  static final Duration FORGET_AFTER = Duration.ofMinutes(10);

  /**
   * How long the last good read stands in while the fleet cannot answer: plans go on — and their
   * launches are retried until the fleet is back — rather than leaving its NodePools out as if they
   * had nothing (an outage is not "no capacity").
   */
  static final Duration STALE_FOR = Duration.ofMinutes(1);

  /** Reads a node class's catalog from its fleet (blocking). */
  interface Reader {
    Catalog read(WarmMetalNodeClass nodeClass) throws CloudProviderException, InterruptedException;
  }

  /** What was last read for a node class (one of catalog and failure is null), and its state. */
  private static final class Entry {
    volatile WarmMetalNodeClass nodeClass;
    volatile String fingerprint;
    volatile Catalog catalog;
    volatile Instant goodAt;
    volatile CloudProviderException failure;
    volatile Instant askedAt;
    boolean reading;
    boolean again;
  }

  private final Reader reader;
  private final Clock clock;
  private final Runnable onChange;
  private final Map<String, Entry> entries = new ConcurrentHashMap<>();
  private final ScheduledExecutorService ticker =
      Executors.newSingleThreadScheduledExecutor(daemon("warmmetal-shapes-timer"));
  private final ExecutorService readers = Executors.newCachedThreadPool(daemon("warmmetal-shapes"));

  ShapesCache(Reader reader, Duration every, Clock clock, Runnable onChange) {
    this.reader = reader;
    this.clock = clock;
    this.onChange = onChange;
    ticker.scheduleWithFixedDelay(
        this::refreshAll, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * The catalog as last read; a node class not read yet (or whose spec changed since) is read now,
   * in the background, and answers {@link Unavailable} until it is.
   */
  Catalog get(WarmMetalNodeClass nodeClass) throws CloudProviderException {
    Entry entry = entry(nodeClass);
    Catalog catalog = entry.catalog;
    CloudProviderException failure = entry.failure;
    if (catalog != null
        && (failure == null
            || (failure instanceof Unavailable
                && entry.goodAt.plus(STALE_FOR).isAfter(clock.instant())))) {
      return catalog;
    }
    if (failure != null) {
      throw failure;
    }
    throw new Unavailable(
        "the instance types of WarmMetalNodeClass "
            + nodeClass.getMetadata().getName()
            + " are being read",
        Duration.ZERO);
  }

  /** Whether a read of the node class (as it is now) has finished, well or not. */
  boolean known(WarmMetalNodeClass nodeClass) {
    Entry entry = entry(nodeClass);
    return entry.catalog != null || entry.failure != null;
  }

  /** Reads the node class again now (a launch changed what its fleet has free). */
  void refresh(WarmMetalNodeClass nodeClass) {
    Entry entry = entries.get(nodeClass.getMetadata().getName());
    if (entry == null || !fingerprint(nodeClass).equals(entry.fingerprint)) {
      entry(nodeClass); // new, or its settings changed: read now (once)
    } else {
      read(entry);
    }
  }

  private Entry entry(WarmMetalNodeClass nodeClass) {
    String fingerprint = fingerprint(nodeClass);
    Entry entry = entries.computeIfAbsent(nodeClass.getMetadata().getName(), n -> new Entry());
    entry.askedAt = clock.instant();
    if (!fingerprint.equals(entry.fingerprint)) {
      synchronized (entry) {
        if (!fingerprint.equals(entry.fingerprint)) {
          entry.nodeClass = nodeClass;
          entry.fingerprint = fingerprint;
          entry.catalog = null; // read through other settings: not these
          entry.failure = null;
          read(entry);
        }
      }
    }
    return entry;
  }

  /** What of a node class its catalog depends on. */
  private static String fingerprint(WarmMetalNodeClass nodeClass) {
    var spec = nodeClass.getSpec();
    var ref = spec.credentialsSecretRef;
    return String.join(
        "\n",
        String.valueOf(spec.endpoint),
        ref == null ? "" : ref.namespace + "/" + ref.name + "#" + ref.key,
        spec.zoneLabelOrDefault(),
        spec.regionLabelOrDefault(),
        String.valueOf(spec.launchesFromStandby()),
        String.valueOf(spec.kubelet == null ? null : spec.kubelet.maxPods),
        String.valueOf(spec.kubelet == null ? null : spec.kubelet.systemReserved),
        String.valueOf(spec.kubelet == null ? null : spec.kubelet.kubeReserved));
  }

  private void refreshAll() {
    Instant forget = clock.instant().minus(FORGET_AFTER);
    entries.values().removeIf(e -> e.askedAt.isBefore(forget));
    entries.values().forEach(this::read);
  }

  /** One read at a time per node class; asked for during one, it reads once more after. */
  private void read(Entry entry) {
    synchronized (entry) {
      if (entry.reading) {
        entry.again = true;
        return;
      }
      entry.reading = true;
    }
    try {
      readers.execute(() -> readNow(entry));
    } catch (RejectedExecutionException closed) {
      entry.reading = false;
    }
  }

  private void readNow(Entry entry) {
    boolean again;
    do {
      WarmMetalNodeClass nodeClass;
      String fingerprint;
      synchronized (entry) {
        nodeClass = entry.nodeClass;
        fingerprint = entry.fingerprint;
        entry.again = false;
      }
      Catalog catalog = null;
      CloudProviderException failure = null;
      try {
        catalog = reader.read(nodeClass);
      } catch (CloudProviderException e) {
        failure = e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        failure = new Unavailable(e.toString(), InstancesApi.DEFAULT_RETRY_AFTER);
      }
      boolean changed;
      synchronized (entry) {
        if (!fingerprint.equals(entry.fingerprint)) {
          changed = false; // read through settings since changed: that read is under way
        } else {
          changed =
              catalog != null
                  ? !same(entry.catalog, catalog) || entry.failure != null
                  : entry.failure == null || entry.failure.getClass() != failure.getClass();
          if (failure != null && entry.failure == null) {
            LOG.warn(
                "WarmMetalNodeClass {}: its instance types cannot be read ({}); its NodePools are"
                    + " left out of plans until they can",
                nodeClass.getMetadata().getName(),
                failure.getMessage());
          }
          if (catalog != null) {
            entry.catalog = catalog;
            entry.goodAt = clock.instant();
          }
          entry.failure = failure;
        }
        again = entry.again;
        if (!again) {
          entry.reading = false;
        }
      }
      if (changed) {
        onChange.run();
      }
    } while (again);
  }

  /** Whether two reads offer the same (when read aside). */
  private static boolean same(Catalog a, Catalog b) {
    return a == b
        || (a != null
            && b != null
            && Objects.equals(a.types(), b.types())
            && Objects.equals(a.available(), b.available()));
  }

  @Override
  public void close() {
    ticker.shutdownNow();
    readers.shutdownNow();
  }
}
