package io.warmmetal.controller.provisioning;

import static java.util.stream.Collectors.toSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.events.KarpenterEvents;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.instances.InstancesApi;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.GoDuration;
import io.warmmetal.controller.karpenter.Hashes;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeClaimTemplate;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
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
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns unschedulable pods into NodeClaims and NodeClaims into launches. One pass: plan with the
 * scheduler (nodes already on their way count first), create a NodeClaim per new node, then launch
 * every NodeClaim not launched yet — through the instances API, with the NodeClaim's UID as client
 * token, so a retried or restarted launch never launches twice. The acceptable shapes go in order
 * of preference, so the API falls back by itself when the first has no capacity.
 */
public final class Provisioner {
  private static final Logger LOG = LoggerFactory.getLogger(Provisioner.class);
  static final Duration DEFAULT_REGISTRATION_TIMEOUT = Duration.ofMinutes(15);

  /**
   * How long a shape that answered InsufficientCapacity is left out of plans (counts may lag a
   * launch).
   */
  static final Duration UNAVAILABLE_FOR = Duration.ofSeconds(10);

  private final KubernetesClient kube;
  private final ControlPlaneVersion controlPlane;
  private final Definitions defs;
  private final Function<WarmMetalNodeClass, InstancesApi> apis;
  private final Scheduler scheduler;
  private final Supplier<List<DaemonSet>> daemonSets;
  private final Supplier<List<Node>> nodes;

  /**
   * Shapes that answered InsufficientCapacity lately, and when: as Karpenter's
   * unavailable-offerings cache.
   */
  private final Map<String, Instant> insufficient = new ConcurrentHashMap<>();

  private final ExecutorService launcher;
  private final Recorder events;
  private final RegistrationHealth health;
  private final KarpenterMetrics metrics;
  private static final Callable<Void> NOTHING = () -> null;
  private int lastUnschedulable;
  private PlanListener planListener = PlanListener.NONE;

  /** Null when the controller is told not to touch pods ({@code --nudge-pods=false}). */
  private final PodNudges nudges;

  /** Told when a launch took a pre-joined standby node, so one is joined in its place. */
  private final Runnable onPreJoinedTaken;

  public Provisioner(
      KubernetesClient kube,
      Definitions defs,
      Function<WarmMetalNodeClass, InstancesApi> apis,
      Scheduler scheduler,
      Supplier<List<DaemonSet>> daemonSets,
      Supplier<List<Node>> nodes,
      int parallelism,
      boolean nudgePods,
      Runnable onPreJoinedTaken,
      Recorder events,
      KarpenterMetrics metrics,
      RegistrationHealth health) {
    this.onPreJoinedTaken = onPreJoinedTaken;
    this.health = health;
    this.nudges = nudgePods ? new PodNudges(kube, metrics, Clock.systemUTC()) : null;
    this.defs = defs;
    this.events = events;
    this.metrics = metrics;
    this.launcher =
        Executors.newFixedThreadPool(
            parallelism,
            r -> {
              Thread t = new Thread(r, "warmmetal-launch");
              t.setDaemon(true);
              return t;
            });
    this.kube = kube;
    this.controlPlane = new ControlPlaneVersion(kube);
    this.apis = apis;
    this.scheduler = scheduler;
    this.daemonSets = daemonSets;
    this.nodes = nodes;
  }

  /** Who is told of each plan (capacity buffers). */
  public void onPlan(PlanListener listener) {
    this.planListener = listener;
  }

  /**
   * @param listed the NodeClaims as this pass listed them from the API server
   */
  public void reconcile(List<Pod> pods, List<NodeClaim> listed) throws Exception {
    Map<PodRequest, Pod> pendingPods = new IdentityHashMap<>();
    pods.stream()
        .filter(PodRequests::unschedulable)
        .forEach(p -> pendingPods.put(PodRequests.of(p), p));
    List<PodRequest> pending = List.copyOf(pendingPods.keySet());
    if (nudges != null) {
      nudges.retain(
          pendingPods.values().stream().map(p -> p.getMetadata().getUid()).collect(toSet()));
    }
    List<NodeClaim> claims = new ArrayList<>(listed);
    List<Callable<Callable<Void>>> launches = new ArrayList<>();
    for (NodeClaim claim : claims) {
      if (claim.getMetadata().getDeletionTimestamp() != null) {
        continue; // termination's now
      }
      if (claim.getStatus() == null
          || !Conditions.isTrue(claim.getStatus().conditions, Conditions.LAUNCHED)) {
        launches.add(() -> launch(claim));
      } else if (!Conditions.isTrue(claim.getStatus().conditions, Conditions.REGISTERED)) {
        expireIfLate(claim);
      }
    }
    if (!pending.isEmpty()) {
      launches.addAll(plan(pendingPods, claims, pods));
    } else {
      metrics.pending(0, 0);
    }
    // Each NodeClaim is created and launched by one task; many at once, as a burst wants (Karpenter
    // launches in
    // parallel too). Then the launches are recorded on the claims, also at once. The pass ends when
    // all are: the
    // next one sees them. (A controller that stops in between launches again by the same client
    // token: a replay.)
    List<Callable<Void>> records = new ArrayList<>();
    for (Future<Callable<Void>> done : launcher.invokeAll(launches)) {
      try {
        records.add(done.get());
      } catch (ExecutionException e) {
        LOG.warn("Launching failed: {}", e.getCause().getMessage());
      }
    }
    for (Future<Void> done : launcher.invokeAll(records)) {
      try {
        done.get();
      } catch (ExecutionException e) {
        LOG.warn("Recording a launch failed: {}", e.getCause().getMessage());
      }
    }
  }

  public void close() {
    if (nudges != null) {
      nudges.close();
    }
    launcher.shutdownNow();
    try {
      launcher.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * A launched claim whose Node has not registered within the node class's {@code
   * registrationTimeout} (default 15 minutes, as Karpenter; bare metal may want more or, with warm
   * machines, far less) is given up: the claim is deleted, its termination terminates the instance
   * (the machine resets and returns to its pool), and its pods are planned again.
   */
  private void expireIfLate(NodeClaim claim) throws Exception {
    WarmMetalNodeClass nodeClass = nodeClass(claim.getSpec());
    if (nodeClass == null) {
      return;
    }
    Duration limit =
        GoDuration.parseOr(
            nodeClass.getSpec().registrationTimeout,
            DEFAULT_REGISTRATION_TIMEOUT,
            DEFAULT_REGISTRATION_TIMEOUT);
    String launchedAt =
        claim.getStatus().conditions.stream()
            .filter(c -> Conditions.LAUNCHED.equals(c.getType()))
            .map(c -> c.getLastTransitionTime())
            .findFirst()
            .orElse(null);
    if (launchedAt == null || Instant.parse(launchedAt).plus(limit).isAfter(Instant.now())) {
      return;
    }
    LOG.info(
        "NodeClaim {}: no Node registered within {}; giving it up",
        claim.getMetadata().getName(),
        limit);
    health.failed(
        claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL),
        "Failed to register node: NodeClaim "
            + claim.getMetadata().getName()
            + " had no Node within "
            + limit);
    kube.resources(NodeClaim.class).resource(claim).delete();
    claim
        .getMetadata()
        .setDeletionTimestamp(Instant.now().toString()); // gone for this pass's plans
  }

  /**
   * Plans nodes for the pending pods; returns the tasks that create and launch their NodeClaims.
   */
  private List<Callable<Callable<Void>>> plan(
      Map<PodRequest, Pod> pendingPods, List<NodeClaim> claims, List<Pod> pods) throws Exception {
    List<PodRequest> pending = List.copyOf(pendingPods.keySet());
    ClusterState state = state(claims, pods);
    List<InstanceType> launchable = launchable(state);
    // Every node of ours counts, with what its bound pods leave free: those on their way
    // (kube-scheduler cannot
    // use them yet) and those ready (it has not placed the pending pods yet). Pods that fit there
    // launch nothing.
    long started = System.nanoTime();
    Scheduler.Plan plan =
        scheduler.schedule(pending, state.views, launchable, List.copyOf(state.nodes.values()));
    metrics.scheduled(Duration.ofNanos(System.nanoTime() - started));
    metrics.pending(pending.size(), plan.unschedulable().size());
    planListener.planned(pendingPods, plan);
    List<Callable<Callable<Void>>> launches = new ArrayList<>();
    Map<String, NodePool> owners = owners(plan.nodes());
    for (Scheduler.PlannedNode node : plan.nodes()) {
      String pool = node.pool().name();
      if (owners.get(pool) == null) {
        continue; // deleted since the cache saw it
      }
      List<InstanceType> types =
          state.typesByPool.get(pool).stream().filter(launchable::contains).toList();
      launches.add(
          () -> {
            NodeClaim claim = create(owners.get(pool), node, types, "provisioned");
            node.pods()
                .forEach(
                    p ->
                        events.publish(KarpenterEvents.nominated(pendingPods.get(p), claim, null)));
            return launch(claim);
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
    return launches;
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
    return ClusterState.of(defs, apis, claims, pods, scheduler, daemonSets.get(), nodes.get());
  }

  /**
   * The types a new node can be of now: with a machine to be had, and not out of capacity a moment
   * ago.
   */
  public List<InstanceType> launchable(ClusterState state) {
    Instant now = Instant.now();
    insufficient.values().removeIf(at -> at.plus(UNAVAILABLE_FOR).isBefore(now));
    return state.allTypes.stream()
        .filter(t -> state.available.contains(t.name()) && !insufficient.containsKey(t.name()))
        .toList();
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
    List<InstanceType> launchable = launchable(state);
    List<NodeClaim> made = new ArrayList<>();
    Map<String, NodePool> owners = owners(nodes);
    for (Scheduler.PlannedNode node : nodes) {
      String pool = node.pool().name();
      if (owners.get(pool) == null) {
        return null;
      }
      List<InstanceType> types =
          state.typesByPool.get(pool).stream()
              .filter(launchable::contains)
              .filter(t -> t.price() < priceBelow)
              .toList();
      NodeClaim claim = create(owners.get(pool), node, types, reason);
      Callable<Void> record = launch(claim);
      if (record == NOTHING) {
        return null;
      }
      record.call();
      made.add(claim);
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
    List<Requirement> requirements = new ArrayList<>(template.requirements);
    requirements.add(
        new Requirement(WellKnown.INSTANCE_TYPE_LABEL, "In", acceptable(node, types, requested)));
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
    claim.getSpec().resources.requests =
        Map.of(
            "cpu",
            new Quantity(requested.cpuMilli() + "m"),
            "memory",
            new Quantity(String.valueOf(requested.memoryBytes())));
    LOG.info("NodeClaim {}: {} for {} pod(s)", name, node.type().name(), node.pods().size());
    NodeClaim created = kube.resources(NodeClaim.class).resource(claim).create();
    metrics.nodeClaimCreated(pool.getMetadata().getName(), reason);
    return created;
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

  /**
   * Launches the claim's instance; returns what records the launch on the claim ({@code NOTHING} if
   * there is nothing to record). Recording waits until every launch of the pass is out: the joins
   * are what the pods wait for.
   */
  private Callable<Void> launch(NodeClaim claim) throws Exception {
    WarmMetalNodeClass nodeClass = nodeClass(claim.getSpec());
    NodePool pool = defs.pool(claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL));
    if (nodeClass == null || pool == null) {
      events.publish(
          KarpenterEvents.nodeClassNotReady(
              claim,
              nodeClass == null
                  ? "NodeClass is not found or not ready"
                  : "NodePool "
                      + claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL)
                      + " is not found or not valid"));
      return NOTHING;
    }
    InstancesApi api = apis.apply(nodeClass);
    ObjectNode request = InstancesApi.object();
    request.put("clientToken", claim.getMetadata().getUid());
    // Warm first, then preparing, then (unless the node class says no) standby — switched on and
    // prepared: a machine
    // minutes away is nearer than none.
    request.put("allowPreparing", true);
    request.put("allowStandby", nodeClass.getSpec().launchesFromStandby());
    // Before all of those, a node the node class keeps joined ahead of time (spec.preJoined): no
    // join at all.
    request.put("allowPreJoined", true);
    ArrayNode shapes = request.putArray("shapes");
    ClusterState.acceptableTypes(claim).forEach(shapes::add);
    request
        .putObject("labels")
        .put(WellKnown.NODEPOOL_LABEL, pool.getMetadata().getName())
        .put(WellKnown.NODECLAIM_LABEL, claim.getMetadata().getName())
        .put(WellKnown.NODECLAIM_UID_LABEL, claim.getMetadata().getUid());
    // The Node's labels: the pool's, and a single value a requirement leaves. A claim planned in a
    // zone (or region):
    // only a machine there, and the Node labelled so, under the node class's machine label keys
    // (racks as zones).
    Map<String, String> nodeLabels = new HashMap<>(InstanceTypes.poolLabels(pool));
    ObjectNode machineLabels = null;
    for (Requirement r : claim.getSpec().requirements) {
      if (!"In".equals(r.getOperator())
          || r.getValues().size() != 1
          || InstanceTypes.defines(r.getKey())) {
        continue;
      }
      boolean zone = WellKnown.ZONE_LABEL.equals(r.getKey());
      if (zone || WellKnown.REGION_LABEL.equals(r.getKey())) {
        machineLabels = machineLabels == null ? request.putObject("machineLabels") : machineLabels;
        machineLabels.put(
            zone
                ? nodeClass.getSpec().zoneLabelOrDefault()
                : nodeClass.getSpec().regionLabelOrDefault(),
            r.getValues().get(0));
      }
      nodeLabels.put(r.getKey(), r.getValues().get(0));
    }
    boolean placed = machineLabels != null;
    // A node class that names its image takes only machines booted from it (the API labels each
    // machine with it).
    String image = nodeClass.getSpec().image;
    if (image != null && !image.isBlank()) {
      machineLabels = machineLabels == null ? request.putObject("machineLabels") : machineLabels;
      machineLabels.put(WellKnown.IMAGE_MACHINE_LABEL, image);
    }
    // Owned servers are paid for whether used or not: Karpenter's on-demand. The instance type (the
    // shape the API
    // picks) and the zone (the machine's) the join adds.
    nodeLabels.put(WellKnown.CAPACITY_TYPE_LABEL, "on-demand");
    List<Taint> all = new ArrayList<>(claim.getSpec().taints);
    all.addAll(claim.getSpec().startupTaints);
    all.add(
        new TaintBuilder().withKey(WellKnown.UNREGISTERED_TAINT).withEffect("NoExecute").build());
    request.set(
        "kubernetes",
        Joins.of(
            nodeClass,
            BootstrapTokens.forClaim(kube, claim.getMetadata().getUid(), Duration.ofHours(1)),
            nodeLabels,
            all,
            controlPlane.get()));
    if (claim.getStatus() == null) {
      claim.setStatus(new NodeClaim.Status());
    }
    try {
      JsonNode instance = api.launch(request);
      claim.getStatus().providerID = instance.get("providerId").asText();
      Conditions.set(
          claim.getStatus().conditions,
          Conditions.LAUNCHED,
          true,
          "Launched",
          "instance " + instance.get("id").asText() + " on " + instance.get("machineId").asText());
      Conditions.setReady(claim.getStatus().conditions, Conditions.NODECLAIM_READY_ON);
      claim
          .getMetadata()
          .getAnnotations()
          .put(WellKnown.INSTANCE_ANNOTATION, instance.get("id").asText());
      claim
          .getMetadata()
          .getLabels()
          .put(WellKnown.INSTANCE_TYPE_LABEL, instance.get("shape").asText());
      claim.getMetadata().getLabels().put(WellKnown.CAPACITY_TYPE_LABEL, "on-demand");
      whatItIs(api, nodeClass, instance.get("machineId").asText(), claim, !placed);
      if (instance.path("preJoined").asBoolean(false)) {
        claim.getMetadata().getAnnotations().put(WellKnown.PRE_JOINED_ANNOTATION, "true");
        LOG.info(
            "NodeClaim {}: took pre-joined standby machine {}",
            claim.getMetadata().getName(),
            instance.get("machineId").asText());
        onPreJoinedTaken.run(); // a replacement joins behind it
      }
      return () -> {
        NodeClaim updated = kube.resources(NodeClaim.class).resource(claim).update();
        updated.setStatus(
            claim.getStatus()); // the status write needs the resourceVersion the update made
        kube.resources(NodeClaim.class).resource(updated).updateStatus();
        LOG.info(
            "NodeClaim {} launched: {}",
            claim.getMetadata().getName(),
            claim.getStatus().providerID);
        return null;
      };
    } catch (InstancesApi.ApiException e) {
      if (e.status() == 503 || "QuotaExceeded".equals(e.code()) || e.noSuchShape()) {
        // No capacity of the acceptable shapes now (or no room under the project's quota, or shapes
        // no longer
        // offered — a quota of 0 reads as none — which upstream's providers also report as
        // insufficient capacity):
        // forget this claim and leave those shapes out of plans for a while; the next pass plans
        // its pods again
        // with live counts.
        LOG.info("NodeClaim {}: {}", claim.getMetadata().getName(), e.getMessage());
        events.publish(KarpenterEvents.insufficientCapacity(claim, e.getMessage()));
        Instant now = Instant.now();
        ClusterState.acceptableTypes(claim).forEach(t -> insufficient.put(t, now));
        kube.resources(NodeClaim.class).resource(claim).delete();
        return NOTHING;
      }
      throw e;
    }
  }

  /**
   * What the claim's machine is, read at once: the node image it booted ({@code status.imageID}, as
   * upstream's claims record their AMI; drift compares it with the node class's), and — for a claim
   * launched in no particular zone ({@code locate}) — its zone and region (the node class's machine
   * label keys), as upstream's claims know their offering's: kubectl shows them, spread and
   * consolidation count them. The Node gets them by registration. A machine that cannot be read now
   * leaves them to the Node's own labels.
   */
  private static void whatItIs(
      InstancesApi api,
      WarmMetalNodeClass nodeClass,
      String machineId,
      NodeClaim claim,
      boolean locate)
      throws InterruptedException {
    try {
      JsonNode machine = api.machine(machineId);
      String image = machine.path("facts").path("image").path("version").asText(null);
      if (image != null) {
        claim.getStatus().imageID = image;
      }
      if (!locate) {
        return;
      }
      JsonNode labels = machine.path("labels");
      String zone = labels.path(nodeClass.getSpec().zoneLabelOrDefault()).asText(null);
      String region = labels.path(nodeClass.getSpec().regionLabelOrDefault()).asText(null);
      if (zone != null) {
        claim.getMetadata().getLabels().put(WellKnown.ZONE_LABEL, zone);
      }
      if (region != null) {
        claim.getMetadata().getLabels().put(WellKnown.REGION_LABEL, region);
      }
    } catch (IOException e) {
      LOG.debug(
          "NodeClaim {}: machine {} not read ({})",
          claim.getMetadata().getName(),
          machineId,
          e.getMessage());
    }
  }

  private WarmMetalNodeClass nodeClass(NodeClaimTemplate.Spec spec) {
    return defs.nodeClass(spec);
  }
}
