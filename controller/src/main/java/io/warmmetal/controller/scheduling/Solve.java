package io.warmmetal.controller.scheduling;

import static io.warmmetal.controller.scheduling.Scheduler.TOPOLOGY_KEYS;

import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.scheduling.Scheduler.Plan;
import io.warmmetal.controller.scheduling.Scheduler.PlannedNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * One call of {@link Scheduler#schedule}: its pods (largest first), its NodePools (heaviest first),
 * its instance types ({@link Catalog}), the nodes pods can go onto — those offered, then the new
 * ones as they are planned — and the pod counts per topology domain, which {@link #plan} fills in.
 */
final class Solve {
  /** Most types a new node keeps open (upstream hands at most 60 to a launch). */
  static final int MAX_OPTIONS = 60;

  private final List<PodRequest> pending;
  private final List<PodRequest> pods;
  private final List<NodePoolView> pools;

  /** The types as each pool's NodeOverlays change them (the same list when it has none). */
  private final Map<NodePoolView, List<InstanceType>> typesOf = new IdentityHashMap<>();

  private final Catalog catalog;
  private final Topology topology;

  /** Anti-affinity across nodes; null when no pod has it on another key than the hostname. */
  private final AntiAffinity antiAffinity;

  /** The nodes of the plan: those offered, then each new one as it takes its first pod. */
  private final List<OpenNode> open = new ArrayList<>();

  /** Whether a NodePool's requirements are about zones or regions: then every pod cares where. */
  private final boolean zonalPools;

  /** Whether a NodePool has a PreferNoSchedule taint: then tolerating those is a relaxation. */
  private final boolean preferNoSchedule;

  /** Numbers the plan's nodes (their hostname domain until they have a name). */
  private long planned;

  /** Whether a pool whose types cannot meet its {@code minValues} is left out. */
  private final boolean strictMinValues;

  Solve(
      Scheduler scheduler,
      List<PodRequest> pending,
      List<NodePoolView> pools,
      List<InstanceType> types,
      List<PlannedNode> inFlight,
      List<Scheduler.Bystander> bystanders) {
    this.pending = pending;
    this.strictMinValues = scheduler.minValuesStrict();
    pods = new ArrayList<>(pending);
    pods.sort(
        Comparator.comparingLong((PodRequest p) -> p.requests().cpuMilli())
            .thenComparingLong(p -> p.requests().memoryBytes())
            .reversed());
    this.pools = new ArrayList<>(pools);
    this.pools.sort(Comparator.comparingInt(NodePoolView::weight).reversed());
    for (PlannedNode coming : inFlight) {
      open.add(new ExistingNode(nextId(), coming));
    }
    zonalPools =
        pools.stream()
            .anyMatch(
                p -> p.requirements().stream().anyMatch(r -> TOPOLOGY_KEYS.contains(r.getKey())));
    preferNoSchedule =
        pools.stream()
            .anyMatch(
                p -> p.taints().stream().anyMatch(t -> "PreferNoSchedule".equals(t.getEffect())));
    for (NodePoolView pool : this.pools) {
      typesOf.put(
          pool,
          pool.overlay() == TypeOverlay.NONE
              ? types
              : types.stream().map(pool.overlay()::apply).toList());
    }
    catalog = new Catalog(scheduler, pools, types);
    topology = new Topology(pods, open, bystanders, potentialDomains(types));
    antiAffinity = AntiAffinity.over(pods, open, bystanders);
  }

  /** The zones and regions with machines to be had: domains a new node could be in. */
  private static Map<String, Set<String>> potentialDomains(List<InstanceType> types) {
    Map<String, Set<String>> potential = new HashMap<>();
    for (InstanceType type : types) {
      for (InstanceType.Offering o : type.availableOfferings()) {
        potential.computeIfAbsent(WellKnown.ZONE_LABEL, k -> new HashSet<>()).add(o.zone());
        if (o.region() != null) {
          potential.computeIfAbsent(WellKnown.REGION_LABEL, k -> new HashSet<>()).add(o.region());
        }
      }
    }
    return potential;
  }

  private String nextId() {
    return "planned-" + (++planned);
  }

  /** The id the next node will have. */
  private String idOfNext() {
    return "planned-" + (planned + 1);
  }

  Plan plan() {
    List<PodRequest> unschedulable = new ArrayList<>();
    for (PodRequest pod : pods) {
      if (!placed(pod)) {
        unschedulable.add(pod);
      }
    }
    // As upstream's queue: pods that found no place go round again while others keep finding theirs
    // (a pod whose affinity is to a pod placed after it, say).
    for (boolean progress = !unschedulable.isEmpty(); progress; ) {
      progress = unschedulable.removeIf(this::placed);
    }
    List<PlannedNode> nodes = new ArrayList<>();
    Map<PodRequest, PlannedNode> onExisting = new IdentityHashMap<>();
    Set<PodRequest> asked = Collections.newSetFromMap(new IdentityHashMap<>());
    asked.addAll(pending);
    for (OpenNode node : open) {
      if (node instanceof ExistingNode existing) {
        node.pods.stream().filter(asked::contains).forEach(p -> onExisting.put(p, existing.source));
      } else {
        nodes.add(new PlannedNode(node.pool, node.type, node.pods, node.free, node.labels));
      }
    }
    return new Plan(nodes, unschedulable, onExisting);
  }

  /**
   * Places the pod, holding to its preferences as if required and relaxing them one at a time while
   * it fits nowhere (upstream's order; tolerating PreferNoSchedule taints last, when a pool has
   * one). Whether it found a place.
   */
  private boolean placed(PodRequest pod) {
    OpenNode target = null;
    PodRequest as = pod;
    for (; as != null; as = as.relaxed(preferNoSchedule)) {
      target = place(as);
      if (target != null) {
        break;
      }
    }
    if (target == null) {
      return false;
    }
    Map<String, String> before = target.labels;
    target.add(pod, as);
    if (target instanceof NewNode node && !node.joined()) {
      node.join();
      open.add(node);
    }
    if (!topology.isEmpty()) {
      topology.placed(pod, target);
    }
    if (antiAffinity != null) {
      antiAffinity.placed(pod, target, before);
    }
    return true;
  }

  /** A node for the pod: one there or planned that takes it, else a new one; null if none can. */
  private OpenNode place(PodRequest pod) {
    boolean placed = !pod.placement().isEmpty();
    boolean zonal =
        pod.mentions(TOPOLOGY_KEYS)
            || zonalPools
            || (antiAffinity != null && antiAffinity.repelledOver(pod, TOPOLOGY_KEYS));
    for (OpenNode node : open) {
      if (zonal && node instanceof NewNode && !node.labels.containsKey(WellKnown.ZONE_LABEL)) {
        continue; // a planned node with no zone yet could land anywhere: not for a pod that cares
      }
      if (node.takes(pod)
          && !repelledInDomain(pod, node.labels)
          && !(placed && !topology.allows(pod, node, open))) {
        return node;
      }
    }
    // A new node: it must also suit the pod's topology (a new node is a new hostname domain). A pod
    // that cares about zones (or a pool that does) gets a node in a chosen zone with a machine to
    // be had; others a node in whatever zone its machine is. Its warm machine and pool capacity are
    // only taken once it is chosen.
    NewNode fresh;
    if (zonal) {
      fresh = zonalNode(pod);
    } else {
      fresh = newNode(pod);
      if (fresh != null && placed && !topology.allows(pod, fresh, open)) {
        fresh = steered(pod, fresh); // its best type's labels are the wrong domain: another's
      }
      if (fresh != null && repelledInDomain(pod, fresh.labels)) {
        fresh = null;
      }
    }
    if (fresh == null || fresh.daemonPortsTaken(pod)) {
      return null;
    }
    catalog.launch(fresh);
    return fresh;
  }

  /**
   * Whether anti-affinity on a topology key other than the hostname keeps the pod off a node with
   * these labels ({@link AntiAffinity#repelled}).
   */
  private boolean repelledInDomain(PodRequest pod, Map<String, String> labels) {
    return antiAffinity != null && antiAffinity.repelled(pod, labels);
  }

  /**
   * The new node as one of its other options, where the best one's labels put it in a domain the
   * pod's affinity or spread refuses (an arch, say): the first option, in order of preference,
   * whose node they accept, with the options that share its values of the pod's topology keys. Null
   * if none does.
   */
  private NewNode steered(PodRequest pod, NewNode fresh) {
    Set<String> keys = new HashSet<>();
    pod.placement().allAffinity().forEach(t -> keys.add(t.topologyKey()));
    pod.placement().spread().forEach(c -> keys.add(c.topologyKey()));
    for (InstanceType option : fresh.options) {
      Map<String, String> labels = catalog.option(fresh.pool, option).labels();
      List<InstanceType> alike =
          fresh.options.stream()
              .filter(
                  o ->
                      keys.stream()
                          .allMatch(
                              k ->
                                  Objects.equals(
                                      catalog.option(fresh.pool, o).labels().get(k),
                                      labels.get(k))))
              .toList();
      List<InstanceType> ordered = new ArrayList<>(List.of(option));
      alike.stream().filter(o -> o != option).forEach(ordered::add);
      NewNode candidate = new NewNode(nextId(), fresh.pool, ordered, fresh.where, catalog);
      if (topology.allows(pod, candidate, open)) {
        return candidate;
      }
    }
    return null;
  }

  /**
   * The labels a new node of the pool takes for the pod ({@link NodePoolView#choices}); null when
   * the pool is not for it: static, a taint it does not tolerate, or it wants a value of one of the
   * pool's keys the pool does not offer.
   */
  private Map<String, String> choices(NodePoolView pool, PodRequest pod) {
    if (pool.fixed() || !pod.tolerates(pool.taints())) {
      return null;
    }
    return pool.choices(pod, catalog.decided);
  }

  /**
   * The best new node for the pod, in whatever zone its machine is; not yet counted against warm
   * machines or pool limits.
   */
  private NewNode newNode(PodRequest pod) {
    for (NodePoolView pool : pools) {
      Map<String, String> chosen = choices(pool, pod);
      if (chosen == null) {
        continue;
      }
      Resources left = catalog.poolLeft(pool);
      Catalog.LabelsWhere labels = catalog.labels(pool, chosen);
      List<InstanceType> poolTypes = typesOf.get(pool);
      InstanceType best = null;
      for (InstanceType type : poolTypes) {
        if (!catalog.suits(pool, type, pod, labels) || !Catalog.withinLimit(left, type)) {
          continue;
        }
        if (best == null || catalog.better(type, best, pod)) {
          best = type;
        }
      }
      if (best != null
          && strictMinValues
          && pool.hasMinValues()
          && !pool.minValuesMet(
              poolTypes.stream().filter(t -> catalog.suits(pool, t, pod, labels)).toList())) {
        best = null; // too few kinds of node would do: upstream's minValues keeps the pool out
      }
      if (best != null) {
        List<InstanceType> options =
            options(pod, poolTypes, best, left, t -> catalog.suits(pool, t, pod, labels));
        return new NewNode(nextId(), pool, options, chosen, catalog);
      }
    }
    return null;
  }

  /**
   * A new node in a zone for a pod that cares about zones: over the zones where a type that suits
   * it has a machine to be had — emptiest of the pod's spread first, then where its affinity draws
   * it, then the most warm machines — the first whose node the pod's selector, affinity,
   * anti-affinity and spread, and the pool's zone requirements, all accept.
   */
  private NewNode zonalNode(PodRequest pod) {
    for (NodePoolView pool : pools) {
      Map<String, String> chosen = choices(pool, pod);
      if (chosen == null) {
        continue;
      }
      Resources left = catalog.poolLeft(pool);
      Map<String, List<InstanceType>> byZone = new TreeMap<>();
      Map<String, String> regionOf = new HashMap<>();
      Map<String, Integer> warmIn = new HashMap<>();
      for (InstanceType type : typesOf.get(pool)) {
        if (!catalog.fitsAndAllowed(pool, type, pod) || !Catalog.withinLimit(left, type)) {
          continue;
        }
        for (InstanceType.Offering o : catalog.offerings(type)) {
          if (catalog.machineLeft(type, o.zone())) {
            byZone.computeIfAbsent(o.zone(), z -> new ArrayList<>()).add(type);
            regionOf.putIfAbsent(o.zone(), o.region());
            warmIn.merge(o.zone(), o.warm(), Integer::sum);
          }
        }
      }
      List<String> zones = new ArrayList<>(byZone.keySet());
      zones.sort(
          Comparator.comparingInt((String z) -> topology.spreadCount(pod, WellKnown.ZONE_LABEL, z))
              .thenComparing(z -> !topology.attracts(pod, WellKnown.ZONE_LABEL, z))
              .thenComparing(z -> -warmIn.get(z)));
      for (String zone : zones) {
        Map<String, String> where = new HashMap<>(chosen);
        where.put(WellKnown.ZONE_LABEL, zone);
        if (regionOf.get(zone) != null) {
          where.put(WellKnown.REGION_LABEL, regionOf.get(zone));
        }
        boolean poolAllows =
            pool.requirements().stream()
                .filter(r -> TOPOLOGY_KEYS.contains(r.getKey()))
                .allMatch(r -> r.matches(where));
        if (!poolAllows) {
          continue;
        }
        Catalog.LabelsWhere labels = catalog.labels(pool, where);
        InstanceType best = null;
        for (InstanceType type : byZone.get(zone)) {
          if (pod.accepts(labels.of(type)) && (best == null || catalog.better(type, best, pod))) {
            best = type;
          }
        }
        if (best == null
            || (strictMinValues && pool.hasMinValues() && !pool.minValuesMet(byZone.get(zone)))) {
          continue;
        }
        // The node's labels are its best type's (its first option) and its id the next: whether
        // the pod may go there is known before its other options are worked out.
        Map<String, String> nodeLabels = labels.of(best);
        if (repelledInDomain(pod, nodeLabels)
            || !topology.allows(pod, idOfNext(), nodeLabels, open)) {
          continue;
        }
        List<InstanceType> options =
            options(pod, byZone.get(zone), best, left, t -> pod.accepts(labels.of(t)));
        return new NewNode(nextId(), pool, options, where, catalog);
      }
    }
    return null;
  }

  /**
   * The types a new node may still become, in order of preference for its first pod (the best
   * first): as upstream's NodeClaims, a new node is not one type but every type that would hold its
   * pods, narrowed as pods join it — so pods pack onto the larger types when they fit together, and
   * the node is the most preferred type that holds them all. Warm types stay among warm ones (a
   * warm machine is seconds away; another type's may be minutes).
   */
  private List<InstanceType> options(
      PodRequest pod,
      List<InstanceType> candidates,
      InstanceType best,
      Resources left,
      Predicate<InstanceType> ok) {
    boolean warm = catalog.warm(best);
    boolean wastes = catalog.wastes(best, pod);
    List<InstanceType> options = new ArrayList<>();
    for (InstanceType type : candidates) {
      if (type == best
          || (ok.test(type)
              && (!warm || catalog.warm(type))
              && (wastes || !catalog.wastes(type, pod))
              && Catalog.withinLimit(left, type))) {
        options.add(type);
      }
    }
    options.sort(
        (a, b) -> a == b ? 0 : catalog.better(a, b, pod) ? -1 : catalog.better(b, a, pod) ? 1 : 0);
    return options.size() > MAX_OPTIONS ? List.copyOf(options.subList(0, MAX_OPTIONS)) : options;
  }
}
