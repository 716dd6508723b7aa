package io.warmmetal.controller.provisioning;

import static java.util.stream.Collectors.toSet;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.events.KarpenterEvents;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.Hashes;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeClaimTemplate;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.VirtualPod;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.pools.RegistrationHealth;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.state.ClusterState;
import io.warmmetal.controller.state.Definitions;
import io.warmmetal.controller.state.InstanceTypes;
import io.warmmetal.controller.state.PodRequests;
import io.warmmetal.controller.state.VolumeUsage;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns unschedulable pods into NodeClaims: plans with the scheduler (nodes already on their way
 * count first) and creates a NodeClaim per new node, many at once, each handed to its lifecycle the
 * moment it exists — which launches it through the cloud provider with the NodeClaim's UID as
 * client token, so a retried or restarted launch never launches twice. The acceptable shapes go in
 * order of preference, so the API falls back by itself when the first has no capacity. Disruption's
 * replacements are created and launched at once ({@link #replacements}).
 */
public final class Provisioner {
  private static final Logger LOG = LoggerFactory.getLogger(Provisioner.class);

  private final KubernetesClient kube;
  private final Definitions defs;
  private final CloudProvider cloud;
  private final Launcher launcher;
  private final NodeClaimWriter writer;

  /** Told of each NodeClaim created: its lifecycle launches it. */
  private final Consumer<String> onCreated;

  private final Scheduler scheduler;
  private final Supplier<List<DaemonSet>> daemonSets;
  private final Supplier<List<Node>> nodes;

  private final ExecutorService createPool;
  private final Recorder events;
  private final RegistrationHealth health;
  private final KarpenterMetrics metrics;
  private int lastUnschedulable;
  private PlanListener planListener = PlanListener.NONE;

  /** Null when the controller is told not to touch pods ({@code --nudge-pods=false}). */
  private final PodNudges nudges;

  private volatile VolumeUsage volumeUsage = VolumeUsage.NONE;

  public Provisioner(
      KubernetesClient kube,
      Definitions defs,
      CloudProvider cloud,
      Launcher launcher,
      NodeClaimWriter writer,
      Consumer<String> onCreated,
      Clock clock,
      Scheduler scheduler,
      Supplier<List<DaemonSet>> daemonSets,
      Supplier<List<Node>> nodes,
      int parallelism,
      boolean nudgePods,
      Recorder events,
      KarpenterMetrics metrics,
      RegistrationHealth health) {
    this.cloud = cloud;
    this.launcher = launcher;
    this.writer = writer;
    this.onCreated = onCreated;
    this.health = health;
    this.nudges = nudgePods ? new PodNudges(kube, metrics, clock) : null;
    this.defs = defs;
    this.events = events;
    this.metrics = metrics;
    this.createPool =
        Executors.newFixedThreadPool(
            parallelism,
            r -> {
              Thread t = new Thread(r, "warmmetal-create");
              t.setDaemon(true);
              return t;
            });
    this.kube = kube;
    this.scheduler = scheduler;
    this.daemonSets = daemonSets;
    this.nodes = nodes;
  }

  /** Who is told of each plan (capacity buffers). */
  public void onPlan(PlanListener listener) {
    this.planListener = listener;
  }

  /**
   * Counts pods' volumes against nodes' CSI attach limits from now on (the volume informers exist
   * once the controller starts).
   */
  public void countVolumes(VolumeUsage usage) {
    this.volumeUsage = usage;
  }

  /**
   * @param listed the NodeClaims as this pass read them (the informer's, with our own writes)
   */
  public void reconcile(List<Pod> pods, List<NodeClaim> listed) throws Exception {
    Map<PodRequest, Pod> pendingPods = new IdentityHashMap<>();
    pods.stream()
        .filter(PodRequests::unschedulable)
        .forEach(p -> pendingPods.put(volumeUsage.request(p), p));
    List<PodRequest> pending = List.copyOf(pendingPods.keySet());
    if (nudges != null) {
      nudges.retain(
          pendingPods.values().stream().map(p -> p.getMetadata().getUid()).collect(toSet()));
    }
    metrics.podsPending(real(pendingPods.values()));
    if (pending.isEmpty()) {
      metrics.pending(0, 0);
      metrics.pendingByEffectiveZone(Map.of());
      return;
    }
    // Each new NodeClaim is created by one task, many at once, as a burst wants; each is handed to
    // its lifecycle the moment it exists, which launches it (Karpenter's split: the provisioner
    // creates, the lifecycle controller launches). The pass ends when all are created: the next
    // one sees them.
    for (Future<Void> done :
        createPool.invokeAll(
            plan(pendingPods, listed.stream().filter(Provisioner::live).toList(), pods))) {
      try {
        done.get();
      } catch (ExecutionException e) {
        LOG.warn("Creating a NodeClaim failed: {}", e.getCause().getMessage());
      }
    }
  }

  /** The pods that are pods: not a CapacityBuffer's virtual ones (nor a request for none). */
  private static List<Pod> real(Collection<Pod> pods) {
    return pods.stream().filter(p -> p != null && !VirtualPod.is(p)).toList();
  }

  private static boolean live(NodeClaim claim) {
    return claim.getMetadata().getDeletionTimestamp() == null;
  }

  public void close() {
    if (nudges != null) {
      nudges.close();
    }
    createPool.shutdownNow();
    try {
      createPool.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Plans nodes for the pending pods; returns the tasks that create their NodeClaims. */
  private List<Callable<Void>> plan(
      Map<PodRequest, Pod> pendingPods, List<NodeClaim> claims, List<Pod> pods) throws Exception {
    List<PodRequest> pending = List.copyOf(pendingPods.keySet());
    ClusterState state = state(claims, pods);
    if (!state.unread.isEmpty()) {
      // A node class's instance types are being read for the first time: the read's answer
      // brings a pass; a plan now would leave its NodePools out for nothing.
      LOG.debug("Instance types of NodePools {} being read; planning after", state.unread);
      return List.of();
    }
    List<InstanceType> launchable = launchable(state);
    // Every node of ours counts, with what its bound pods leave free: those on their way
    // (kube-scheduler cannot
    // use them yet) and those ready (it has not placed the pending pods yet). Pods that fit there
    // launch nothing.
    long started = System.nanoTime();
    Scheduler.Plan plan =
        scheduler.schedule(
            pending, state.views, launchable, List.copyOf(state.nodes.values()), state.bystanders);
    metrics.scheduled(Duration.ofNanos(System.nanoTime() - started));
    metrics.pending(pending.size(), plan.unschedulable().size());
    Map<String, Integer> byZone = new HashMap<>();
    pendingPods.forEach(
        (request, pod) -> {
          if (!VirtualPod.is(pod)) {
            byZone.merge(request.effectiveZone(), 1, Integer::sum);
          }
        });
    metrics.pendingByEffectiveZone(byZone);
    List<Pod> placed = new ArrayList<>();
    plan.nodes().forEach(n -> n.pods().forEach(p -> placed.add(pendingPods.get(p))));
    plan.onExisting().keySet().forEach(p -> placed.add(pendingPods.get(p)));
    metrics.podsDecided(
        real(placed), real(plan.unschedulable().stream().map(pendingPods::get).toList()));
    planListener.planned(pendingPods, plan);
    List<Callable<Void>> creates = new ArrayList<>();
    Map<String, NodePool> owners = owners(plan.nodes());
    for (Scheduler.PlannedNode node : plan.nodes()) {
      String pool = node.pool().name();
      if (owners.get(pool) == null) {
        continue; // deleted since the cache saw it
      }
      List<InstanceType> types = launchable(state, pool);
      creates.add(
          () -> {
            NodeClaim claim = create(owners.get(pool), node, types, "provisioned");
            onCreated.accept(claim.getMetadata().getName());
            node.pods()
                .forEach(
                    p ->
                        events.publish(KarpenterEvents.nominated(pendingPods.get(p), claim, null)));
            return null;
          });
    }
    nominateOntoExisting(plan, state, pendingPods);
    for (PodRequest pod : plan.unschedulable()) {
      events.publish(
          KarpenterEvents.failedScheduling(
              pendingPods.get(pod),
              "no NodePool has an instance type with a machine to be had now that fits its requests, node selector, "
                  + "affinity, tolerations and topology"));
    }
    for (var view : state.views) {
      if (state.typesByPool.get(view.name()).stream().noneMatch(view::allows)) {
        events.publish(KarpenterEvents.noCompatibleInstanceTypes(state.pools.get(view.name())));
      }
    }
    if (plan.unschedulable().size() != lastUnschedulable && !plan.unschedulable().isEmpty()) {
      LOG.info(
          "{} pod(s) fit no NodePool and shape with a machine to be had now: {}",
          plan.unschedulable().size(),
          plan.unschedulable().stream().map(PodRequest::name).limit(5).toList());
    }
    lastUnschedulable = plan.unschedulable().size();
    return creates;
  }

  /**
   * Pods that go onto nodes there or on their way: Nominated, as upstream tells them; those whose
   * node is initialized are touched so kube-scheduler tries them now ({@link PodNudges}).
   */
  private void nominateOntoExisting(
      Scheduler.Plan plan, ClusterState state, Map<PodRequest, Pod> pendingPods) {
    if (plan.onExisting().isEmpty()) {
      return;
    }
    Map<Scheduler.PlannedNode, NodeClaim> claimOf = new IdentityHashMap<>();
    state.nodes.forEach((claim, node) -> claimOf.put(node, claim));
    plan.onExisting()
        .forEach(
            (pod, node) -> {
              NodeClaim claim = claimOf.get(node);
              if (claim == null) {
                return;
              }
              events.publish(KarpenterEvents.nominated(pendingPods.get(pod), claim, null));
              if (nudges != null
                  && claim.getStatus() != null
                  && claim.getStatus().nodeName != null
                  && Conditions.isTrue(claim.getStatus().conditions, Conditions.INITIALIZED)) {
                nudges.nudge(
                    pendingPods.get(pod),
                    claim.getStatus().nodeName,
                    claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL));
              }
            });
  }

  /** Pods planned onto new nodes only, and the pod each request stands for. */
  public record FreshPlan(Map<PodRequest, Pod> requests, Scheduler.Plan plan) {}

  /**
   * Where these pods would go on new nodes alone — none of the cluster's counted: the nodes a
   * pre-joined CapacityBuffer keeps standing by. Of every type the fleet has, whether a machine of
   * it is free now or not: the standby's own launches take the free ones, and a size that followed
   * them would shrink as it grew.
   */
  public FreshPlan planOnNewNodes(List<Pod> pods) throws Exception {
    Map<PodRequest, Pod> requests = new IdentityHashMap<>();
    pods.forEach(p -> requests.put(PodRequests.of(p), p));
    if (requests.isEmpty()) {
      return new FreshPlan(requests, new Scheduler.Plan(List.of(), List.of()));
    }
    ClusterState state = state(List.of(), List.of());
    if (!state.unread.isEmpty()) {
      return new FreshPlan(requests, new Scheduler.Plan(List.of(), List.copyOf(requests.keySet())));
    }
    return new FreshPlan(
        requests,
        scheduler.schedule(
            List.copyOf(requests.keySet()),
            state.views,
            state.allTypes.stream().map(Provisioner::unbounded).toList()));
  }

  /** The type with as many machines as wanted in each of its zones. */
  private static InstanceType unbounded(InstanceType type) {
    return new InstanceType(
        type.name(),
        type.labels(),
        type.allocatable(),
        type.price(),
        type.warm(),
        type.offerings().stream()
            .map(o -> new InstanceType.Offering(o.zone(), o.region(), Integer.MAX_VALUE, o.warm()))
            .toList());
  }

  /**
   * The standby nodes a plan's new nodes are, per node class (its name): their instance types and
   * zones, counted.
   */
  public Map<String, List<WarmMetalNodeClass.PreJoined>> standbyFor(Scheduler.Plan plan) {
    Map<String, Map<String, WarmMetalNodeClass.PreJoined>> byClass = new HashMap<>();
    for (Scheduler.PlannedNode node : plan.nodes()) {
      NodePool pool = defs.pool(node.pool().name());
      WarmMetalNodeClass nodeClass =
          pool == null ? null : defs.nodeClass(pool.getSpec().template.spec);
      if (nodeClass == null) {
        continue;
      }
      String zone = node.labels().get(WellKnown.ZONE_LABEL);
      WarmMetalNodeClass.PreJoined entry =
          new WarmMetalNodeClass.PreJoined(node.type().name(), 0, zone);
      byClass
          .computeIfAbsent(nodeClass.getMetadata().getName(), n -> new LinkedHashMap<>())
          .computeIfAbsent(entry.key(), k -> entry)
          .count++;
    }
    Map<String, List<WarmMetalNodeClass.PreJoined>> standby = new HashMap<>();
    byClass.forEach((name, entries) -> standby.put(name, List.copyOf(entries.values())));
    return standby;
  }

  /**
   * The cluster as plans are made against it now (NodePools, shapes, nodes; see {@link
   * ClusterState}).
   */
  public ClusterState state(List<NodeClaim> claims, List<Pod> pods) throws Exception {
    return ClusterState.of(
        defs, cloud, claims, pods, scheduler, daemonSets.get(), nodes.get(), volumeUsage);
  }

  /**
   * The types a new node can be of now: with a machine to be had, and not out of capacity a moment
   * ago.
   */
  public List<InstanceType> launchable(ClusterState state) {
    return state.allTypes.stream().filter(t -> launchable(state, t)).toList();
  }

  /** The pool's types a new node can be of now, as its NodeOverlays price and size them. */
  public List<InstanceType> launchable(ClusterState state, String pool) {
    return state.typesByPool.getOrDefault(pool, List.of()).stream()
        .filter(t -> launchable(state, t))
        .toList();
  }

  private boolean launchable(ClusterState state, InstanceType type) {
    return state.available.contains(type.name()) && !launcher.resting(type.name());
  }

  /**
   * Creates and launches a NodeClaim for each node planned, now: disruption's replacements,
   * launched before what they replace is drained. Returns them all, or null if one could not be
   * launched (those that were stay, as ordinary nodes).
   */
  public List<NodeClaim> replacements(
      ClusterState state, List<Scheduler.PlannedNode> nodes, String reason) throws Exception {
    return replacements(state, nodes, reason, Double.MAX_VALUE);
  }

  /**
   * As above, the fallback shapes each cheaper than {@code priceBelow} (a consolidation must save).
   */
  public List<NodeClaim> replacements(
      ClusterState state, List<Scheduler.PlannedNode> nodes, String reason, double priceBelow)
      throws Exception {
    List<NodeClaim> made = new ArrayList<>();
    Map<String, NodePool> owners = owners(nodes);
    for (Scheduler.PlannedNode node : nodes) {
      String pool = node.pool().name();
      if (owners.get(pool) == null) {
        return null;
      }
      List<InstanceType> types =
          launchable(state, pool).stream().filter(t -> t.price() < priceBelow).toList();
      NodeClaim claim = create(owners.get(pool), node, types, reason);
      if (!(launcher.launch(claim) instanceof Launcher.Done launched)) {
        return null;
      }
      made.add(launcher.record(launched));
    }
    return made;
  }

  /**
   * The NodePools new claims will be owned by, as the cache has them — if the API server still has
   * the same one: a claim owned by a UID that is no longer its NodePool's (deleted and created
   * again a moment ago) would be garbage-collected at once. A NodePool the cache is behind on gets
   * its claims next pass.
   */
  private Map<String, NodePool> owners(List<Scheduler.PlannedNode> nodes) {
    Map<String, NodePool> owners = new HashMap<>();
    for (Scheduler.PlannedNode node : nodes) {
      String name = node.pool().name();
      if (!owners.containsKey(name)) {
        NodePool current = kube.resources(NodePool.class).withName(name).get();
        NodePool cached = defs.pool(name);
        owners.put(
            name,
            current != null
                    && cached != null
                    && Objects.equals(cached.getMetadata().getUid(), current.getMetadata().getUid())
                ? cached
                : null);
      }
    }
    return owners;
  }

  private NodeClaim create(
      NodePool pool, Scheduler.PlannedNode node, List<InstanceType> types, String reason) {
    NodeClaim claim = new NodeClaim();
    String name = pool.getMetadata().getName() + "-" + UUID.randomUUID().toString().substring(0, 5);
    claim.getMetadata().setName(name);
    // As Karpenter: the pool's labels (template, requirements, name) and annotations; the instance
    // type once launched.
    claim.getMetadata().setLabels(new HashMap<>(InstanceTypes.poolLabels(pool)));
    Map<String, String> annotations = new HashMap<>();
    if (pool.getSpec().template.metadata.annotations != null) {
      annotations.putAll(pool.getSpec().template.metadata.annotations);
    }
    // What it is made from, hashed: drift compares these with the NodePool and node class as they
    // are later.
    annotations.put(Hashes.NODEPOOL_HASH_ANNOTATION, Hashes.nodePool(pool));
    annotations.put(Hashes.NODEPOOL_HASH_VERSION_ANNOTATION, Hashes.NODEPOOL_HASH_VERSION);
    WarmMetalNodeClass nodeClass = defs.nodeClass(pool.getSpec().template.spec);
    if (nodeClass != null) {
      annotations.put(Hashes.NODECLASS_HASH_ANNOTATION, nodeClass.hash());
    }
    claim.getMetadata().setAnnotations(annotations);
    claim
        .getMetadata()
        .setFinalizers(
            List.of(WellKnown.TERMINATION_FINALIZER)); // its instance goes before it does
    // Owned by its NodePool, as upstream's: deleting the NodePool deletes its NodeClaims (each
    // drained first).
    claim
        .getMetadata()
        .setOwnerReferences(
            List.of(
                new OwnerReferenceBuilder()
                    .withApiVersion(pool.getApiVersion())
                    .withKind(pool.getKind())
                    .withName(pool.getMetadata().getName())
                    .withUid(pool.getMetadata().getUid())
                    .withBlockOwnerDeletion(true)
                    .build()));
    var template = pool.getSpec().template.spec;
    claim.getSpec().nodeClassRef = template.nodeClassRef;
    claim.getSpec().taints = template.taints;
    claim.getSpec().startupTaints = template.startupTaints;
    claim.getSpec().expireAfter = template.expireAfter;
    claim.getSpec().terminationGracePeriod = template.terminationGracePeriod;
    Resources requested =
        node.pods().stream().map(PodRequest::requests).reduce(Resources.NONE, Resources::plus);
    List<String> acceptable = acceptable(node, types, requested);
    // Under --min-values-policy=BestEffort a node whose types cannot give a requirement its
    // minValues is planned anyway: its claim asks for what they can give, and says it was relaxed.
    List<InstanceType> options = types.stream().filter(t -> acceptable.contains(t.name())).toList();
    boolean relaxed =
        !scheduler.minValuesStrict()
            && node.pool().hasMinValues()
            && !node.pool().minValuesMet(options);
    List<Requirement> requirements = new ArrayList<>();
    for (Requirement r : template.requirements) {
      requirements.add(relaxed ? relaxedTo(r, options) : r);
    }
    if (relaxed) {
      claim.getMetadata().getAnnotations().put(WellKnown.MIN_VALUES_RELAXED_ANNOTATION, "true");
    }
    // As upstream: a claim some of whose types a NodeOverlay priced or sized says so (not a static
    // pool's, whose type the pods did not choose).
    if (!pool.isStatic() && options.stream().anyMatch(InstanceType::priceOverlaid)) {
      claim.getMetadata().getAnnotations().put(WellKnown.PRICE_OVERLAY_APPLIED_ANNOTATION, "true");
    }
    if (!pool.isStatic() && options.stream().anyMatch(InstanceType::capacityOverlaid)) {
      claim
          .getMetadata()
          .getAnnotations()
          .put(WellKnown.CAPACITY_OVERLAY_APPLIED_ANNOTATION, "true");
    }
    requirements.add(new Requirement(WellKnown.INSTANCE_TYPE_LABEL, "In", acceptable));
    // Labels chosen for this node beyond its pool's and type's — its zone and region (its machine
    // must be there: the
    // launch asks for its machine labels), values of the pool's keys its pods asked for — narrow
    // its requirements.
    Map<String, String> given = Scheduler.labels(node.pool(), node.type());
    node.labels()
        .forEach(
            (key, value) -> {
              if (!given.containsKey(key) && !InstanceTypes.defines(key)) {
                requirements.removeIf(r -> r.getKey().equals(key) && "In".equals(r.getOperator()));
                requirements.add(new Requirement(key, "In", List.of(value)));
                claim.getMetadata().getLabels().put(key, value);
              }
            });
    claim.getSpec().requirements = requirements;
    claim.getSpec().resources.requests = requests(requested);
    LOG.info("NodeClaim {}: {} for {} pod(s)", name, node.type().name(), node.pods().size());
    NodeClaim created = writer.create(claim);
    metrics.nodeClaimCreated(pool.getMetadata().getName(), reason, relaxed);
    return created;
  }

  /**
   * The requirement with its {@code minValues} lowered to the distinct values of its key these
   * types offer, where they offer fewer (upstream's BestEffort relaxation).
   */
  private static Requirement relaxedTo(Requirement r, List<InstanceType> types) {
    if (r.getMinValues() == null) {
      return r;
    }
    long offered =
        types.stream()
            .map(t -> t.labels().get(r.getKey()))
            .filter(v -> v != null)
            .distinct()
            .count();
    if (offered == 0 || offered >= r.getMinValues()) {
      return r; // a key no type defines rules nothing out
    }
    Requirement lowered = new Requirement(r.getKey(), r.getOperator(), r.getValues());
    lowered.setMinValues((int) offered);
    return lowered;
  }

  /**
   * What the claim's pods request, as upstream's claims carry it: cpu, memory and every other
   * resource they ask for — pods, ephemeral storage, GPUs (registration waits for an extended one
   * to be allocatable before the claim is Initialized).
   */
  static Map<String, Quantity> requests(Resources requested) {
    Map<String, Quantity> requests = new TreeMap<>();
    requests.put("cpu", new Quantity(requested.cpuMilli() + "m"));
    requests.put("memory", new Quantity(String.valueOf(requested.memoryBytes())));
    requested
        .extended()
        .forEach(
            (resource, amount) -> {
              if (amount > 0 && !InstanceTypes.NODES.equals(resource)) {
                requests.put(resource, new Quantity(String.valueOf(amount)));
              }
            });
    return requests;
  }

  /**
   * The planned type first, then every other type of the pool that would hold the same pods,
   * cheapest first: the API takes them in order, so a type that has no machine left by launch time
   * falls back to the next.
   */
  private List<String> acceptable(
      Scheduler.PlannedNode node, List<InstanceType> types, Resources requested) {
    List<String> names = new ArrayList<>(List.of(node.type().name()));
    String zone = node.labels().get(WellKnown.ZONE_LABEL);
    types.stream()
        .filter(t -> !t.name().equals(node.type().name()))
        .filter(t -> node.pool().allows(t) && scheduler.usable(node.pool(), t).fits(requested))
        .filter(
            t -> node.pods().stream().allMatch(p -> p.accepts(Scheduler.labels(node.pool(), t))))
        .filter(
            t ->
                zone == null
                    || t.availableOfferings().stream().anyMatch(o -> zone.equals(o.zone())))
        .sorted(Comparator.comparingDouble(InstanceType::price))
        .forEach(t -> names.add(t.name()));
    return names;
  }

  private WarmMetalNodeClass nodeClass(NodeClaimTemplate.Spec spec) {
    return defs.nodeClass(spec);
  }
}
