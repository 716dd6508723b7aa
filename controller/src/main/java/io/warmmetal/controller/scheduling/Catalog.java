package io.warmmetal.controller.scheduling;

import io.warmmetal.controller.karpenter.WellKnown;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The instance types as one plan sees them: each (pool, type)'s node labels and usable resources,
 * worked out once; what is still to be had as the plan's new nodes take it — machines per type and
 * per (type, zone), warm machines per type, what each NodePool's limits still allow; and which of
 * two types a pod is better off on.
 */
final class Catalog {
  private final Scheduler scheduler;

  /** Machines still to be had per type (by name) and zone. */
  private final Map<String, Map<String, Integer>> zoneLeft = new HashMap<>();

  /** Warm machines still to be had per type (by name). */
  private final Map<String, Integer> warmLeft = new HashMap<>();

  /** What each NodePool's limits still allow (by name; null: no limit). */
  private final Map<String, Resources> poolLeft = new HashMap<>();

  /** The label keys a node's type or machine decides (no pool requirement chooses them). */
  final Set<String> decided = new HashSet<>(Scheduler.TOPOLOGY_KEYS);

  /**
   * Machines still to be had per type (by name: each pool may see its own copy of a type, changed
   * by its NodeOverlays, but the machines are the same) as this plan's new nodes take them.
   */
  private final Map<String, Integer> machines = new HashMap<>();

  private final Map<NodePoolView, Map<InstanceType, Option>> options = new IdentityHashMap<>();

  /** Node labels per {@code where} chosen and pool. */
  private final Map<Map<String, String>, Map<NodePoolView, LabelsWhere>> labelsWhere =
      new HashMap<>();

  /** Each type's devices (extended resources with a domain: GPUs, not pods or disk). */
  private final Map<InstanceType, List<String>> devices = new IdentityHashMap<>();

  /** Each type's offerings with a machine to be had, in a known zone. */
  private final Map<InstanceType, List<InstanceType.Offering>> offerings = new IdentityHashMap<>();

  /**
   * A node of the type in the pool: its labels, what it has for pods, whether the pool allows it.
   */
  record Option(Map<String, String> labels, Resources usable, boolean allowed) {}

  Catalog(Scheduler scheduler, List<NodePoolView> pools, List<InstanceType> types) {
    this.scheduler = scheduler;
    types.forEach(t -> warmLeft.put(t.name(), t.warm()));
    pools.forEach(p -> poolLeft.put(p.name(), p.remaining()));
    for (InstanceType type : types) {
      for (InstanceType.Offering o : offerings(type)) {
        zoneLeft.computeIfAbsent(type.name(), n -> new HashMap<>()).put(o.zone(), o.available());
      }
      decided.addAll(type.labels().keySet());
    }
  }

  /** The type's offerings with a machine to be had ({@link InstanceType#availableOfferings}). */
  List<InstanceType.Offering> offerings(InstanceType type) {
    return offerings.computeIfAbsent(type, InstanceType::availableOfferings);
  }

  Option option(NodePoolView pool, InstanceType type) {
    return options
        .computeIfAbsent(pool, p -> new IdentityHashMap<>())
        .computeIfAbsent(
            type,
            t -> new Option(Scheduler.labels(pool, t), scheduler.usable(pool, t), pool.allows(t)));
  }

  /** The labels of nodes in the pool with {@code where} chosen for them, per type. */
  LabelsWhere labels(NodePoolView pool, Map<String, String> where) {
    return labelsWhere
        .computeIfAbsent(where, w -> new IdentityHashMap<>())
        .computeIfAbsent(pool, p -> new LabelsWhere(pool, where));
  }

  /**
   * The labels of nodes in one pool with one {@code where} chosen for them, per type: to be read,
   * not kept (the same map serves every node of the kind).
   */
  final class LabelsWhere {
    private final NodePoolView pool;
    private final Map<String, String> where;
    private final Map<InstanceType, Map<String, String>> byType = new IdentityHashMap<>();

    private LabelsWhere(NodePoolView pool, Map<String, String> where) {
      this.pool = pool;
      this.where = where;
    }

    Map<String, String> of(InstanceType type) {
      return byType.computeIfAbsent(type, t -> withWhere(option(pool, t).labels(), where));
    }
  }

  static Map<String, String> withWhere(Map<String, String> labels, Map<String, String> where) {
    if (where.isEmpty()) {
      return labels;
    }
    Map<String, String> all = new HashMap<>(labels);
    all.putAll(where);
    return all;
  }

  boolean machineLeft(InstanceType type) {
    return machines.computeIfAbsent(type.name(), n -> type.available()) > 0;
  }

  boolean machineLeft(InstanceType type, String zone) {
    return zoneLeft.getOrDefault(type.name(), Map.of()).getOrDefault(zone, 0) > 0;
  }

  /** A new node moves from one type to another (from null: opens; to null: never). */
  void take(InstanceType from, InstanceType to) {
    if (from != null) {
      machines.merge(from.name(), 1, Integer::sum);
    }
    if (to != null) {
      machines.computeIfAbsent(to.name(), n -> to.available());
      machines.merge(to.name(), -1, Integer::sum);
    }
  }

  /** What the pool's limits still allow; null: no limit. */
  Resources poolLeft(NodePoolView pool) {
    return poolLeft.get(pool.name());
  }

  /** Whether a node of the type is within what the pool's limits still allow ({@code left}). */
  static boolean withinLimit(Resources left, InstanceType type) {
    return left == null || left.fitsCounting(type.allocatable());
  }

  /**
   * Counts the new node against what is left: its machine in its zone, a warm machine of its type,
   * and the pool's limits — the roomiest option, as upstream's: the node may yet grow into it.
   */
  void launch(NewNode node) {
    String zone = node.labels.get(WellKnown.ZONE_LABEL);
    if (zone != null) {
      zoneLeft
          .computeIfAbsent(node.type.name(), n -> new HashMap<>())
          .merge(zone, -1, Integer::sum);
    }
    warmLeft.merge(node.type.name(), -1, Integer::sum);
    Resources left = poolLeft(node.pool);
    if (left != null) {
      Resources roomiest =
          node.options.stream()
              .map(InstanceType::allocatable)
              .reduce(Resources.NONE, Resources::max);
      poolLeft.put(node.pool.name(), left.minus(roomiest.onlyExtended(left.extended().keySet())));
    }
  }

  /**
   * Whether the pool allows the type and a node of it has room for the pod (labels not looked at).
   */
  boolean fitsAndAllowed(NodePoolView pool, InstanceType type, PodRequest pod) {
    if (!type.allocatable().fits(pod.requests())) {
      return false;
    }
    Option option = option(pool, type);
    return option.allowed() && machineLeft(type) && option.usable().fits(pod.requests());
  }

  /**
   * Whether a node of the type in the pool could hold the pod: the pool allows it, the pod accepts
   * it, it fits.
   */
  boolean suits(NodePoolView pool, InstanceType type, PodRequest pod, LabelsWhere labels) {
    return fitsAndAllowed(pool, type, pod) && pod.accepts(labels.of(type));
  }

  boolean warm(InstanceType type) {
    return warmLeft.getOrDefault(type.name(), 0) > 0;
  }

  /**
   * Types without special hardware the pod does not ask for first (GPUs stay for the pods that need
   * them), then warm capacity (it arrives in seconds), then the lower price, then the smaller type.
   */
  boolean better(InstanceType a, InstanceType b, PodRequest pod) {
    boolean aWastes = wastes(a, pod);
    boolean bWastes = wastes(b, pod);
    if (aWastes != bWastes) {
      return !aWastes;
    }
    boolean aWarm = warm(a);
    boolean bWarm = warm(b);
    if (aWarm != bWarm) {
      return aWarm;
    }
    if (a.price() != b.price()) {
      return a.price() < b.price();
    }
    return a.allocatable().cpuMilli() < b.allocatable().cpuMilli();
  }

  /** Whether the type has a device the pod does not ask for. */
  boolean wastes(InstanceType type, PodRequest pod) {
    for (String device : devices.computeIfAbsent(type, Catalog::devices)) {
      if (pod.requests().extended().getOrDefault(device, 0L) == 0) {
        return true;
      }
    }
    return false;
  }

  private static List<String> devices(InstanceType type) {
    return type.allocatable().extended().keySet().stream()
        .filter(r -> r.contains("/")) // devices, not pods or disk
        .toList();
  }
}
