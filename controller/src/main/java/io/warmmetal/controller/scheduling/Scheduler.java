package io.warmmetal.controller.scheduling;

import io.fabric8.kubernetes.api.model.Taint;
import io.warmmetal.controller.karpenter.WellKnown;
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
import java.util.stream.Stream;

/**
 * Decides which nodes to launch for pending pods, as Karpenter's provisioner does: pods largest
 * first, each onto a node already planned if one fits and suits it (first fit), else onto a new
 * node of the best (NodePool, instance type) pair that suits it — heaviest NodePool first, then
 * instance types with warm machines, then the cheapest — within the NodePool's limits (resources
 * and {@code nodes}) and its requirements' {@code minValues}. What every node gives up before pods
 * arrive: a fixed reserve, and the DaemonSets that would land on a node of that pool and type. Pods
 * count as the {@code pods} resource, so a type's pods-per-node is its own.
 */
public final class Scheduler {
  /** The node label keys whose values a new node's machine decides: its zone and region. */
  private static final Set<String> TOPOLOGY_KEYS =
      Set.of(WellKnown.ZONE_LABEL, WellKnown.REGION_LABEL);

  private final Resources reserve;

  /** Numbers planned nodes (their hostname domain until they have a name). */
  private long planned;

  /**
   * @param reserve what every node gives up besides its DaemonSets (system daemons that are not
   *     pods, say)
   */
  public Scheduler(Resources reserve) {
    this.reserve = reserve;
  }

  /**
   * What a node of {@code type} in {@code pool} has for pods: its allocatable less the reserve and
   * its DaemonSets.
   */
  public Resources usable(NodePoolView pool, InstanceType type) {
    return type.allocatable().minus(reserve).minus(pool.daemonOverhead(labels(pool, type)));
  }

  /**
   * A node to launch: its pool, its instance type and the pods meant for it — or, offered to {@link
   * #schedule} as on its way or there, the pods it runs already.
   */
  public record PlannedNode(
      NodePoolView pool,
      InstanceType type,
      List<PodRequest> pods,
      Resources free,
      Map<String, String> labels,
      List<Taint> taints) {
    /** A node with the labels its pool and type give it. */
    public PlannedNode(
        NodePoolView pool, InstanceType type, List<PodRequest> pods, Resources free) {
      this(pool, type, pods, free, Scheduler.labels(pool, type));
    }

    /** A node with its pool's taints (one not up yet: registration gives it those). */
    public PlannedNode(
        NodePoolView pool,
        InstanceType type,
        List<PodRequest> pods,
        Resources free,
        Map<String, String> labels) {
      this(pool, type, pods, free, labels, pool.taints());
    }
  }

  /**
   * The nodes to launch (not those already there), the pods no node can take, and the pods that go
   * onto a node already there or on its way (which of those offered to {@link #schedule}).
   */
  public record Plan(
      List<PlannedNode> nodes,
      List<PodRequest> unschedulable,
      Map<PodRequest, PlannedNode> onExisting) {
    public Plan(List<PlannedNode> nodes, List<PodRequest> unschedulable) {
      this(nodes, unschedulable, Map.of());
    }
  }

  public Plan schedule(
      List<PodRequest> pending, List<NodePoolView> pools, List<InstanceType> types) {
    return schedule(pending, pools, types, List.of());
  }

  /**
   * As {@link #schedule(List, List, List)}, with nodes already on their way ({@code inFlight}:
   * launched, not yet ready) offered to the pods first, so capacity coming is not launched twice.
   */
  public Plan schedule(
      List<PodRequest> pending,
      List<NodePoolView> pools,
      List<InstanceType> types,
      List<PlannedNode> inFlight) {
    List<PodRequest> pods = new ArrayList<>(pending);
    pods.sort(
        Comparator.comparingLong((PodRequest p) -> p.requests().cpuMilli())
            .thenComparingLong(p -> p.requests().memoryBytes())
            .reversed());
    List<NodePoolView> byWeight = new ArrayList<>(pools);
    byWeight.sort(Comparator.comparingInt(NodePoolView::weight).reversed());
    Map<String, Integer> warmLeft = new HashMap<>();
    types.forEach(t -> warmLeft.put(t.name(), t.warm()));
    Map<String, Resources> poolLeft = new HashMap<>();
    pools.forEach(p -> poolLeft.put(p.name(), p.remaining()));
    Map<String, Integer> zoneLeft = new HashMap<>(); // machines to be had per (type, zone)

    List<Open> open = new ArrayList<>();
    for (PlannedNode coming : inFlight) {
      Open node =
          new Open(coming.pool(), coming.type(), coming.labels(), coming.free(), coming.taints());
      node.pods.addAll(
          coming.pods()); // what it runs already: counted for pods per node, ports, anti-affinity
      coming.pods().forEach(node::count);
      node.source = coming;
      open.add(node);
    }
    // Anti-affinity across nodes (zones and other keys) is checked only when some pod has such a
    // term; affinity and
    // spread only when some pod has those.
    boolean domains =
        Stream.concat(pods.stream(), inFlight.stream().flatMap(n -> n.pods().stream()))
            .anyMatch(
                p ->
                    p.allAntiAffinity().stream()
                        .anyMatch(t -> !t.topologyKey().equals(PodAffinityTerm.HOSTNAME)));
    Map<String, Set<String>> potential = new HashMap<>();
    for (InstanceType type : types) {
      for (InstanceType.Offering o : type.availableOfferings()) {
        zoneLeft.put(type.name() + "\u0000" + o.zone(), o.available());
        potential.computeIfAbsent(WellKnown.ZONE_LABEL, k -> new HashSet<>()).add(o.zone());
        if (o.region() != null) {
          potential.computeIfAbsent(WellKnown.REGION_LABEL, k -> new HashSet<>()).add(o.region());
        }
      }
    }
    Topology topology = new Topology(pods, open, potential);
    Catalog catalog = new Catalog(zoneLeft);
    types.forEach(t -> catalog.decided.addAll(t.labels().keySet()));
    boolean preferNoSchedule =
        pools.stream()
            .anyMatch(
                p -> p.taints().stream().anyMatch(t -> "PreferNoSchedule".equals(t.getEffect())));
    List<PodRequest> unschedulable = new ArrayList<>();
    for (PodRequest pod : pods) {
      if (!placed(
          pod,
          open,
          byWeight,
          types,
          catalog,
          warmLeft,
          poolLeft,
          domains,
          topology,
          preferNoSchedule)) {
        unschedulable.add(pod);
      }
    }
    // As upstream's queue: pods that found no place go round again while others keep finding theirs
    // (a pod whose
    // affinity is to a pod placed after it, say).
    for (boolean progress = !unschedulable.isEmpty(); progress; ) {
      progress =
          unschedulable.removeIf(
              pod ->
                  placed(
                      pod,
                      open,
                      byWeight,
                      types,
                      catalog,
                      warmLeft,
                      poolLeft,
                      domains,
                      topology,
                      preferNoSchedule));
    }
    List<PlannedNode> nodes = new ArrayList<>();
    Map<PodRequest, PlannedNode> onExisting = new IdentityHashMap<>();
    Set<PodRequest> asked = Collections.newSetFromMap(new IdentityHashMap<>());
    asked.addAll(pending);
    for (Open node : open) {
      if (node.source == null) {
        nodes.add(new PlannedNode(node.pool, node.type, node.pods, node.free, node.labels));
      } else {
        node.pods.stream().filter(asked::contains).forEach(p -> onExisting.put(p, node.source));
      }
    }
    return new Plan(nodes, unschedulable, onExisting);
  }

  /**
   * Places the pod, holding to its preferences as if required and relaxing them one at a time while
   * it fits nowhere (upstream's order; tolerating PreferNoSchedule taints last, when a pool has
   * one). Whether it found a place.
   */
  private boolean placed(
      PodRequest pod,
      List<Open> open,
      List<NodePoolView> pools,
      List<InstanceType> types,
      Catalog catalog,
      Map<String, Integer> warmLeft,
      Map<String, Resources> poolLeft,
      boolean domains,
      Topology topology,
      boolean preferNoSchedule) {
    Open target = null;
    PodRequest as = pod;
    for (; as != null; as = as.relaxed(preferNoSchedule)) {
      target = place(as, open, pools, types, catalog, warmLeft, poolLeft, domains, topology);
      if (target != null) {
        break;
      }
    }
    if (target == null) {
      return false;
    }
    target.add(pod, as);
    if (target.fresh) {
      target.fresh = false;
      target.joined = true;
      catalog.take(null, target.type);
      open.add(target);
    }
    if (!topology.isEmpty()) {
      topology.placed(pod, target);
    }
    return true;
  }

  /**
   * Whether another pod's required anti-affinity over zones or regions selects the pod: where it
   * goes matters.
   */
  private static boolean repelledOverZones(PodRequest pod, List<Open> open) {
    for (Open node : open) {
      for (PodRequest other : node.pods) {
        if (other.antiAffinity().stream()
            .anyMatch(t -> TOPOLOGY_KEYS.contains(t.topologyKey()) && t.selects(pod))) {
          return true;
        }
      }
    }
    return false;
  }

  /** A node for the pod: one there or planned that takes it, else a new one; null if none can. */
  private Open place(
      PodRequest pod,
      List<Open> open,
      List<NodePoolView> pools,
      List<InstanceType> types,
      Catalog catalog,
      Map<String, Integer> warmLeft,
      Map<String, Resources> poolLeft,
      boolean domains,
      Topology topology) {
    boolean placed = !pod.placement().isEmpty();
    boolean zonal =
        pod.mentions(TOPOLOGY_KEYS)
            || pools.stream()
                .anyMatch(
                    p ->
                        p.requirements().stream().anyMatch(r -> TOPOLOGY_KEYS.contains(r.getKey())))
            || (domains && repelledOverZones(pod, open));
    for (Open node : open) {
      if (zonal && node.source == null && !node.labels.containsKey(WellKnown.ZONE_LABEL)) {
        continue; // a planned node with no zone yet could land anywhere: not for a pod that cares
        // where
      }
      if (node.takes(pod)
          && !(domains && repelledInDomain(pod, node, open))
          && !(placed && !topology.allows(pod, node, open))) {
        return node;
      }
    }
    // A new node: it must also suit the pod's topology (a new node is a new hostname domain). A pod
    // that cares
    // about zones (or a pool that does) gets a node in a chosen zone with a machine to be had;
    // others a node in
    // whatever zone its machine is. Its warm machine and pool capacity are only taken once it is
    // chosen.
    Open fresh;
    if (zonal) {
      fresh = zonalNode(pod, pools, types, catalog, warmLeft, poolLeft, open, domains, topology);
    } else {
      fresh = openNode(pod, pools, types, catalog, warmLeft, poolLeft);
      if (fresh != null && placed && !topology.allows(pod, fresh, open)) {
        fresh =
            steered(
                pod, fresh, open,
                topology); // its best type's labels are the wrong domain: another's
      }
      if (fresh != null && domains && repelledInDomain(pod, fresh, open)) {
        fresh = null;
      }
    }
    if (fresh == null || fresh.daemonPortsTaken(pod)) {
      return null;
    }
    String zone = fresh.labels.get(WellKnown.ZONE_LABEL);
    if (zone != null) {
      catalog.zoneLeft.merge(fresh.type.name() + "\u0000" + zone, -1, Integer::sum);
    }
    warmLeft.merge(fresh.type.name(), -1, Integer::sum);
    Resources left = poolLeft.get(fresh.pool.name());
    if (left != null) {
      // The roomiest option counts against the limit, as upstream's: the node may yet grow into it.
      Resources roomiest =
          fresh.options.stream()
              .map(InstanceType::allocatable)
              .reduce(Resources.NONE, Resources::max);
      poolLeft.put(fresh.pool.name(), left.minus(roomiest.onlyExtended(left.extended().keySet())));
    }
    fresh.fresh = true;
    return fresh;
  }

  /**
   * The new node as one of its other options, where the best one's labels put it in a domain the
   * pod's affinity or spread refuses (an arch, say): the first option, in order of preference,
   * whose node they accept, with the options that share its values of the pod's topology keys. Null
   * if none does.
   */
  private Open steered(PodRequest pod, Open fresh, List<Open> open, Topology topology) {
    Set<String> keys = new HashSet<>();
    pod.placement().allAffinity().forEach(t -> keys.add(t.topologyKey()));
    pod.placement().spread().forEach(c -> keys.add(c.topologyKey()));
    for (InstanceType option : fresh.options) {
      Map<String, String> labels = fresh.catalog.option(fresh.pool, option).labels();
      List<InstanceType> alike =
          fresh.options.stream()
              .filter(
                  o ->
                      keys.stream()
                          .allMatch(
                              k ->
                                  Objects.equals(
                                      fresh.catalog.option(fresh.pool, o).labels().get(k),
                                      labels.get(k))))
              .toList();
      List<InstanceType> ordered = new ArrayList<>(List.of(option));
      alike.stream().filter(o -> o != option).forEach(ordered::add);
      Open candidate = new Open(fresh.pool, ordered, fresh.where, fresh.catalog);
      if (topology.allows(pod, candidate, open)) {
        return candidate;
      }
    }
    return null;
  }

  /** The best new node for the pod, not yet counted against warm machines or pool limits. */
  private Open openNode(
      PodRequest pod,
      List<NodePoolView> pools,
      List<InstanceType> types,
      Catalog catalog,
      Map<String, Integer> warmLeft,
      Map<String, Resources> poolLeft) {
    for (NodePoolView pool : pools) {
      if (pool.fixed() || !pod.tolerates(pool.taints())) {
        continue;
      }
      Map<String, String> chosen = pool.choices(pod, catalog.decided);
      if (chosen == null) {
        continue; // the pod wants a value of one of the pool's keys the pool does not offer
      }
      Resources left = poolLeft.get(pool.name());
      InstanceType best = null;
      for (InstanceType type : types) {
        if (!catalog.suits(pool, type, pod, chosen)
            || (left != null
                && !left.fits(type.allocatable().onlyExtended(left.extended().keySet())))) {
          continue;
        }
        if (best == null || better(type, best, pod, warmLeft)) {
          best = type;
        }
      }
      if (best != null
          && pool.hasMinValues()
          && !pool.minValuesMet(
              types.stream().filter(t -> catalog.suits(pool, t, pod, chosen)).toList())) {
        best = null; // too few kinds of node would do: upstream's minValues keeps the pool out
      }
      if (best != null) {
        List<InstanceType> options =
            options(
                pod,
                pool,
                types,
                best,
                catalog,
                warmLeft,
                left,
                t -> catalog.suits(pool, t, pod, chosen));
        return new Open(pool, options, chosen, catalog);
      }
    }
    return null;
  }

  /** Most types a new node keeps open (upstream hands at most 60 to a launch). */
  static final int MAX_OPTIONS = 60;

  /**
   * The types a new node may still become, in order of preference for its first pod (the best
   * first): as upstream's NodeClaims, a new node is not one type but every type that would hold its
   * pods, narrowed as pods join it — so pods pack onto the larger types when they fit together, and
   * the node is the most preferred type that holds them all. Warm types stay among warm ones (a
   * warm machine is seconds away; another type's may be minutes).
   */
  private List<InstanceType> options(
      PodRequest pod,
      NodePoolView pool,
      List<InstanceType> types,
      InstanceType best,
      Catalog catalog,
      Map<String, Integer> warmLeft,
      Resources left,
      Predicate<InstanceType> ok) {
    boolean warm = warmLeft.getOrDefault(best.name(), 0) > 0;
    boolean wastes = wastes(best, pod);
    List<InstanceType> options = new ArrayList<>();
    for (InstanceType type : types) {
      if (type == best
          || (ok.test(type)
              && (!warm || warmLeft.getOrDefault(type.name(), 0) > 0)
              && (wastes || !wastes(type, pod))
              && (left == null
                  || left.fits(type.allocatable().onlyExtended(left.extended().keySet()))))) {
        options.add(type);
      }
    }
    options.sort(
        (a, b) ->
            a == b ? 0 : better(a, b, pod, warmLeft) ? -1 : better(b, a, pod, warmLeft) ? 1 : 0);
    return options.size() > MAX_OPTIONS ? List.copyOf(options.subList(0, MAX_OPTIONS)) : options;
  }

  /**
   * A new node in a zone for a pod that cares about zones: over the zones where a type that suits
   * it has a machine to be had — emptiest of the pod's spread first, then where its affinity draws
   * it, then the most warm machines — the first whose node the pod's selector, affinity,
   * anti-affinity and spread, and the pool's zone requirements, all accept.
   */
  private Open zonalNode(
      PodRequest pod,
      List<NodePoolView> pools,
      List<InstanceType> types,
      Catalog catalog,
      Map<String, Integer> warmLeft,
      Map<String, Resources> poolLeft,
      List<Open> open,
      boolean domains,
      Topology topology) {
    for (NodePoolView pool : pools) {
      if (pool.fixed() || !pod.tolerates(pool.taints())) {
        continue;
      }
      Map<String, String> chosen = pool.choices(pod, catalog.decided);
      if (chosen == null) {
        continue;
      }
      Resources left = poolLeft.get(pool.name());
      Map<String, List<InstanceType>> byZone = new TreeMap<>();
      Map<String, String> regionOf = new HashMap<>();
      Map<String, Integer> warmIn = new HashMap<>();
      for (InstanceType type : types) {
        if (!catalog.fitsAndAllowed(pool, type, pod)
            || (left != null
                && !left.fits(type.allocatable().onlyExtended(left.extended().keySet())))) {
          continue;
        }
        for (InstanceType.Offering o : type.availableOfferings()) {
          if (catalog.zoneLeft.getOrDefault(type.name() + "\u0000" + o.zone(), 0) > 0) {
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
        InstanceType best = null;
        for (InstanceType type : byZone.get(zone)) {
          Map<String, String> labels = new HashMap<>(catalog.option(pool, type).labels());
          labels.putAll(where);
          if (pod.accepts(labels) && (best == null || better(type, best, pod, warmLeft))) {
            best = type;
          }
        }
        if (best == null || (pool.hasMinValues() && !pool.minValuesMet(byZone.get(zone)))) {
          continue;
        }
        InstanceType first = best;
        List<InstanceType> options =
            options(
                pod,
                pool,
                byZone.get(zone),
                first,
                catalog,
                warmLeft,
                left,
                t -> pod.accepts(withWhere(catalog.option(pool, t).labels(), where)));
        Open node = new Open(pool, options, where, catalog);
        if (!(domains && repelledInDomain(pod, node, open)) && topology.allows(pod, node, open)) {
          return node;
        }
      }
    }
    return null;
  }

  private static Map<String, String> withWhere(
      Map<String, String> labels, Map<String, String> where) {
    if (where.isEmpty()) {
      return labels;
    }
    Map<String, String> all = new HashMap<>(labels);
    all.putAll(where);
    return all;
  }

  /** Each (pool, type)'s node labels and usable resources, worked out once per plan. */
  private final class Catalog {
    /** Machines still to be had per (type, zone) as this plan takes them. */
    final Map<String, Integer> zoneLeft;

    /** The label keys a node's type or machine decides (no pool requirement chooses them). */
    final Set<String> decided = new HashSet<>(TOPOLOGY_KEYS);

    /** Machines still to be had per type as this plan's new nodes take them. */
    private final Map<InstanceType, Integer> machines = new IdentityHashMap<>();

    Catalog(Map<String, Integer> zoneLeft) {
      this.zoneLeft = zoneLeft;
    }

    boolean machineLeft(InstanceType type) {
      return machines.computeIfAbsent(type, InstanceType::available) > 0;
    }

    /** A new node moves from one type to another (from null: opens; to null: never). */
    void take(InstanceType from, InstanceType to) {
      if (from != null) {
        machines.merge(from, 1, Integer::sum);
      }
      if (to != null) {
        machines.computeIfAbsent(to, InstanceType::available);
        machines.merge(to, -1, Integer::sum);
      }
    }

    /**
     * Whether the pool allows the type and a node of it has room for the pod (labels not looked
     * at).
     */
    boolean fitsAndAllowed(NodePoolView pool, InstanceType type, PodRequest pod) {
      return type.allocatable().fits(pod.requests())
          && pool.allows(type)
          && machineLeft(type)
          && option(pool, type).usable().fits(pod.requests());
    }

    record Option(Map<String, String> labels, Resources usable) {}

    private final Map<NodePoolView, Map<InstanceType, Option>> options = new IdentityHashMap<>();

    Option option(NodePoolView pool, InstanceType type) {
      return options
          .computeIfAbsent(pool, p -> new IdentityHashMap<>())
          .computeIfAbsent(type, t -> new Option(labels(pool, t), usable(pool, t)));
    }

    /**
     * Whether a node of the type in the pool could hold the pod: the pool allows it, the pod
     * accepts it, it fits.
     */
    boolean suits(
        NodePoolView pool, InstanceType type, PodRequest pod, Map<String, String> chosen) {
      if (!type.allocatable().fits(pod.requests()) || !pool.allows(type) || !machineLeft(type)) {
        return false; // cheap checks first: most types fail here
      }
      Option option = option(pool, type);
      return option.usable().fits(pod.requests())
          && pod.accepts(withWhere(option.labels(), chosen));
    }
  }

  /**
   * Whether an anti-affinity term on a topology key other than the hostname keeps the pod off
   * {@code node}: another node of the same domain (the same value of the key) holds a pod they
   * repel. Nodes without the key are in no domain, as in Kubernetes.
   */
  private static boolean repelledInDomain(PodRequest pod, Open node, List<Open> open) {
    for (PodRequest p : allPods(open)) {
      for (String key : keys(pod, p)) {
        String domain = node.labels.get(key);
        if (domain != null
            && !key.equals(PodAffinityTerm.HOSTNAME)
            && pod.repels(p, key)
            && open.stream()
                .anyMatch(o -> o.pods.contains(p) && domain.equals(o.labels.get(key)))) {
          return true;
        }
      }
    }
    return false;
  }

  private static List<PodRequest> allPods(List<Open> open) {
    List<PodRequest> all = new ArrayList<>();
    open.forEach(o -> all.addAll(o.pods));
    return all;
  }

  private static Set<String> keys(PodRequest a, PodRequest b) {
    Set<String> keys = new HashSet<>();
    a.allAntiAffinity().forEach(t -> keys.add(t.topologyKey()));
    b.antiAffinity().forEach(t -> keys.add(t.topologyKey()));
    return keys;
  }

  /**
   * Types without special hardware the pod does not ask for first (GPUs stay for the pods that need
   * them), then warm capacity (it arrives in seconds), then the lower price, then the smaller type.
   */
  private static boolean better(
      InstanceType a, InstanceType b, PodRequest pod, Map<String, Integer> warmLeft) {
    boolean aWastes = wastes(a, pod);
    boolean bWastes = wastes(b, pod);
    if (aWastes != bWastes) {
      return !aWastes;
    }
    boolean aWarm = warmLeft.get(a.name()) > 0;
    boolean bWarm = warmLeft.get(b.name()) > 0;
    if (aWarm != bWarm) {
      return aWarm;
    }
    if (a.price() != b.price()) {
      return a.price() < b.price();
    }
    return a.allocatable().cpuMilli() < b.allocatable().cpuMilli();
  }

  private static boolean wastes(InstanceType type, PodRequest pod) {
    return type.allocatable().extended().keySet().stream()
        .filter(r -> r.contains("/")) // devices, not pods or disk
        .anyMatch(r -> pod.requests().extended().getOrDefault(r, 0L) == 0);
  }

  /**
   * The labels a node of {@code type} in {@code pool} gets: the type's, the pool's, and the pool's
   * name.
   */
  public static Map<String, String> labels(NodePoolView pool, InstanceType type) {
    Map<String, String> labels = new HashMap<>(type.labels());
    labels.putAll(pool.labels());
    labels.put(WellKnown.NODEPOOL_LABEL, pool.name());
    return labels;
  }

  /**
   * A node being planned: one there or on its way (its type and labels known), or a new one, which
   * may still become any of its {@code options} (see {@link #options}); its type, labels and free
   * resources are those of its best option that holds its pods.
   */
  private final class Open implements Topology.Node {
    final String id = "planned-" + (++planned);
    final NodePoolView pool;
    final List<Taint> taints;
    InstanceType type;
    Map<String, String> labels;
    final List<PodRequest> pods = new ArrayList<>();
    Resources free;

    /** A new node's possible types, best first; null for a node there or on its way. */
    List<InstanceType> options;

    /**
     * A new node's labels chosen for it: its zone and region, values of its pool's keys its first
     * pod wanted.
     */
    final Map<String, String> where;

    final Catalog catalog;
    Resources requested = Resources.NONE;

    /** Host ports a new node's DaemonSets bind there. */
    List<HostPort> daemonPorts = List.of();

    /** The most any option has room for: a quick no. */
    Resources roomiest;

    private PodRequest askedFor;
    private List<InstanceType> answer;

    /** The node as offered, when it is one already there or on its way; null for a new one. */
    PlannedNode source;

    /** Just made for a pod, not in the plan yet. */
    boolean fresh;

    /** A new node in the plan: its machine counted as taken. */
    boolean joined;

    int withPorts;
    int withAntiAffinity;

    /**
     * A node there or on its way, with the taints it has (a cordon, a disruption's taint count).
     */
    Open(
        NodePoolView pool,
        InstanceType type,
        Map<String, String> labels,
        Resources free,
        List<Taint> taints) {
      this.taints = taints;
      this.pool = pool;
      this.type = type;
      this.labels = labels;
      this.free = free;
      this.where = Map.of();
      this.catalog = null;
      this.daemonPorts = pool.daemons().isEmpty() ? List.of() : pool.daemonPorts(labels);
    }

    /** A new node that may become any of {@code options}. */
    Open(
        NodePoolView pool, List<InstanceType> options, Map<String, String> where, Catalog catalog) {
      this.taints = pool.taints();
      this.pool = pool;
      this.where = where;
      this.catalog = catalog;
      narrow(options);
      daemonPorts = pool.daemons().isEmpty() ? List.of() : pool.daemonPorts(labels);
    }

    private void narrow(List<InstanceType> still) {
      options = still;
      if (joined && type != still.get(0)) {
        catalog.take(type, still.get(0)); // grown into another type: its machine instead
      }
      type = still.get(0);
      labels = withWhere(catalog.option(pool, type).labels(), where);
      free = catalog.option(pool, type).usable().minus(requested);
      roomiest = Resources.NONE;
      for (InstanceType o : still) {
        roomiest = roomiest.max(catalog.option(pool, o).usable());
      }
    }

    /** The options that would still hold the node's pods and this one, and that it accepts. */
    private List<InstanceType> optionsWith(PodRequest pod) {
      if (pod != askedFor) {
        Resources all = requested.plus(pod.requests());
        answer =
            options.stream()
                .filter(
                    o ->
                        (o == type || catalog.machineLeft(o))
                            && catalog.option(pool, o).usable().fits(all)
                            && pod.accepts(withWhere(catalog.option(pool, o).labels(), where)))
                .toList();
        askedFor = pod;
      }
      return answer;
    }

    @Override
    public String id() {
      return id;
    }

    @Override
    public Map<String, String> labels() {
      return labels;
    }

    @Override
    public List<PodRequest> pods() {
      return pods;
    }

    @Override
    public boolean tolerates(PodRequest pod) {
      return pod.tolerates(taints);
    }

    boolean takes(PodRequest pod) {
      if (!pod.tolerates(taints)) {
        return false;
      }
      if (options == null
          ? !free.fits(pod.requests()) || !pod.accepts(labels)
          : !roomiest.fits(requested.plus(pod.requests())) || optionsWith(pod).isEmpty()) {
        return false;
      }
      // The pairwise checks only where a pod of the pair has ports or anti-affinity: most have
      // neither.
      if ((!pod.hostPorts().isEmpty() || withPorts > 0)
          && pods.stream().anyMatch(pod::portsConflictWith)) {
        return false;
      }
      if (daemonPortsTaken(pod)) {
        return false;
      }
      return (pod.allAntiAffinity().isEmpty() && withAntiAffinity == 0)
          || pods.stream().noneMatch(p -> pod.repels(p, PodAffinityTerm.HOSTNAME));
    }

    /** Adds the pod, placed as {@code as} (the pod with the preferences it was placed with). */
    void add(PodRequest pod, PodRequest as) {
      List<InstanceType> still = options == null ? null : optionsWith(as);
      pods.add(pod);
      requested = requested.plus(pod.requests());
      if (options == null) {
        free = free.minus(pod.requests());
      } else {
        narrow(still);
      }
      count(pod);
    }

    /** Whether a DaemonSet that will run here binds a host port the pod binds. */
    boolean daemonPortsTaken(PodRequest pod) {
      return !daemonPorts.isEmpty()
          && pod.hostPorts().stream()
              .anyMatch(p -> daemonPorts.stream().anyMatch(p::conflictsWith));
    }

    void count(PodRequest pod) {
      withPorts += pod.hostPorts().isEmpty() ? 0 : 1;
      withAntiAffinity += pod.allAntiAffinity().isEmpty() ? 0 : 1;
    }
  }
}
