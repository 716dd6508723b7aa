package io.warmmetal.controller.metrics;

import io.fabric8.kubernetes.api.model.Pod;
import io.prometheus.client.Collector;
import io.prometheus.client.GaugeMetricFamily;
import io.prometheus.client.Histogram;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Upstream's pod provisioning metrics, timed from points in memory as upstream's are: when a
 * pending pod was first seen ({@code ack}), when the scheduler first decided about it, and when it
 * first found it a place ({@code schedulable}) — then how long until it was bound and running
 * ({@code karpenter_pods_provisioning_*}, {@code
 * karpenter_pods_scheduling_decision_duration_seconds}); the gauges of pods still waiting are
 * worked out when scraped. A pod is forgotten once running or deleted.
 */
final class PodProvisioning extends Collector {
  private static final String MEMORY_NOTE =
      " Note: this calculated from a point in memory, not by the pod creation timestamp.";

  /** What is known of one pod, by {@code namespace/name}. */
  private static final class Times {
    final Instant ack;
    volatile Instant decided;
    volatile Instant schedulable;
    volatile boolean bound;

    Times(Instant ack) {
      this.ack = ack;
    }
  }

  private final Clock clock;
  private final Map<String, Times> pods = new ConcurrentHashMap<>();
  private final Histogram decision;
  private final Histogram bound;
  private final Histogram startup;

  PodProvisioning(Clock clock, double[] buckets) {
    this.clock = clock;
    decision =
        histogram(
            "karpenter_pods_scheduling_decision_duration_seconds",
            "The time it takes for Karpenter to first try to schedule a pod after it's been seen.",
            buckets);
    bound =
        histogram(
            "karpenter_pods_provisioning_bound_duration_seconds",
            "The time from when Karpenter first thinks the pod can schedule until it binds."
                + MEMORY_NOTE,
            buckets);
    startup =
        histogram(
            "karpenter_pods_provisioning_startup_duration_seconds",
            "The time from when Karpenter first thinks the pod can schedule until the pod is"
                + " running."
                + MEMORY_NOTE,
            buckets);
  }

  private static Histogram histogram(String name, String help, double[] buckets) {
    return Histogram.build().name(name).help(help).buckets(buckets).create();
  }

  /** Pending pods the provisioner sees: each first seen now, unless seen before. */
  void seen(Collection<Pod> pending) {
    Instant now = clock.instant();
    pending.forEach(p -> pods.computeIfAbsent(key(p), k -> new Times(now)));
  }

  /**
   * A plan's outcome: pods it found a place for (new nodes or nodes there) and pods it did not. The
   * first decision about a pod is timed from when it was seen; a place found is when it could
   * schedule (until a plan finds it none again).
   */
  void decided(Collection<Pod> placed, Collection<Pod> unplaced) {
    Instant now = clock.instant();
    for (Pod pod : placed) {
      Times times = decide(pod, now);
      if (times != null && times.schedulable == null) {
        times.schedulable = now;
      }
    }
    for (Pod pod : unplaced) {
      Times times = decide(pod, now);
      if (times != null) {
        times.schedulable = null;
      }
    }
  }

  private Times decide(Pod pod, Instant now) {
    Times times = pods.get(key(pod));
    if (times != null && times.decided == null) {
      times.decided = now;
      decision.observe(seconds(Duration.between(times.ack, now)));
    }
    return times;
  }

  /** The pod was bound to a node now. */
  void bound(Pod pod) {
    Times times = pods.get(key(pod));
    if (times != null && !times.bound) {
      times.bound = true;
      if (times.schedulable != null) {
        bound.observe(seconds(Duration.between(times.schedulable, clock.instant())));
      }
    }
  }

  /** The pod runs now: its last time observed, and it is forgotten. */
  void started(Pod pod) {
    Times times = pods.remove(key(pod));
    if (times != null && times.schedulable != null) {
      startup.observe(seconds(Duration.between(times.schedulable, clock.instant())));
    }
  }

  /** The pod is gone. */
  void deleted(Pod pod) {
    pods.remove(key(pod));
  }

  @Override
  public List<MetricFamilySamples> collect() {
    Instant now = clock.instant();
    List<String> labels = List.of("name", "namespace");
    GaugeMetricFamily undecided =
        new GaugeMetricFamily(
            "karpenter_pods_provisioning_scheduling_undecided_time_seconds",
            "The time from when Karpenter has seen a pod without making a scheduling decision for"
                + " the pod."
                + MEMORY_NOTE,
            labels);
    GaugeMetricFamily unbound =
        new GaugeMetricFamily(
            "karpenter_pods_provisioning_unbound_time_seconds",
            "The time from when Karpenter first thinks the pod can schedule until it binds."
                + MEMORY_NOTE,
            labels);
    GaugeMetricFamily unstarted =
        new GaugeMetricFamily(
            "karpenter_pods_provisioning_unstarted_time_seconds",
            "The time from when Karpenter first thinks the pod can schedule until the pod is"
                + " running."
                + MEMORY_NOTE,
            labels);
    pods.forEach(
        (key, times) -> {
          String[] nameAndNamespace = nameAndNamespace(key);
          List<String> values = List.of(nameAndNamespace[0], nameAndNamespace[1]);
          if (times.decided == null && !times.bound) {
            undecided.addMetric(values, seconds(Duration.between(times.ack, now)));
          }
          Instant schedulable = times.schedulable;
          if (schedulable != null) {
            double waited = seconds(Duration.between(schedulable, now));
            if (!times.bound) {
              unbound.addMetric(values, waited);
            }
            unstarted.addMetric(values, waited);
          }
        });
    List<MetricFamilySamples> families = new ArrayList<>();
    for (Histogram histogram : List.of(decision, bound, startup)) {
      families.addAll(histogram.collect());
    }
    families.add(undecided);
    families.add(unbound);
    families.add(unstarted);
    return families;
  }

  private static String key(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }

  private static String[] nameAndNamespace(String key) {
    int slash = key.indexOf('/');
    return new String[] {key.substring(slash + 1), key.substring(0, slash)};
  }

  private static double seconds(Duration d) {
    return d.toNanos() / 1e9;
  }
}
