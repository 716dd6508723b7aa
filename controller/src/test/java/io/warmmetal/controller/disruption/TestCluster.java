package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.AffinityBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.Hashes;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeClassReference;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.NodePoolView;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.state.PodRequests;
import io.warmmetal.controller.termination.PodBudgets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A small cluster of plain objects for disruption's tests: a NodePool ({@code default}, {@code
 * WhenEmptyOrUnderutilized} after 30 s; more as a test adds them), two instance types, initialized
 * NodeClaims with their Nodes and pods — and the capacity a simulation plans against, which records
 * the replacements it is asked to launch instead of launching them.
 */
final class TestCluster {
  static final Instant T0 = Instant.parse("2026-03-02T10:00:00Z");
  static final long GIB = 1L << 30;

  final Scheduler scheduler = new Scheduler(Resources.NONE);
  final NodePool pool = new NodePool();

  /** Every NodePool, by name: {@link #pool} first. */
  final Map<String, NodePool> pools = new LinkedHashMap<>();

  final InstanceType small = type("small", 4, 1.0);
  final InstanceType large = type("large", 8, 1.5);
  final List<NodeClaim> claims = new ArrayList<>();
  final List<Node> nodes = new ArrayList<>();
  final List<Pod> pods = new ArrayList<>();
  final List<PodDisruptionBudget> pdbs = new ArrayList<>();

  /** The taints of each node that has some (a cordon, say). */
  final Map<String, List<Taint>> taints = new HashMap<>();

  /** The replacements launched, each launch's nodes. */
  final List<List<Scheduler.PlannedNode>> launched = new ArrayList<>();

  /** Whether a replacement can be launched (false: no machine for it now). */
  boolean machines = true;

  /** How many simulations asked what a new node can be of. */
  int simulations;

  TestCluster() {
    setUp(pool, "default");
  }

  /** Another NodePool, as {@code default} is made. */
  NodePool pool(String name) {
    return setUp(new NodePool(), name);
  }

  private NodePool setUp(NodePool added, String name) {
    added.getMetadata().setName(name);
    added.getMetadata().setUid(name + "-uid");
    added.getMetadata().setResourceVersion("1");
    added.getSpec().template.spec.nodeClassRef = new NodeClassReference();
    added.getSpec().template.spec.nodeClassRef.group = WarmMetalNodeClass.GROUP;
    added.getSpec().template.spec.nodeClassRef.kind = WarmMetalNodeClass.KIND;
    added.getSpec().template.spec.nodeClassRef.name = "default";
    added.getSpec().template.spec.requirements =
        List.of(new Requirement(WellKnown.CAPACITY_TYPE_LABEL, "In", List.of("on-demand")));
    added.getSpec().disruption = new NodePool.Disruption();
    added.getSpec().disruption.consolidationPolicy = Consolidation.WHEN_EMPTY_OR_UNDERUTILIZED;
    added.getSpec().disruption.consolidateAfter = "30s";
    pools.put(name, added);
    return added;
  }

  private static InstanceType type(String name, int cpus, double price) {
    return new InstanceType(
        name,
        Map.of(WellKnown.INSTANCE_TYPE_LABEL, name),
        Resources.of(cpus * 1000L, cpus * 4 * GIB).with(PodRequests.PODS, 110),
        price,
        1);
  }

  /** The NodePool's budget: one, as {@code nodes} ("0", "1", "50%"). */
  void budget(String nodes) {
    budget(pool, nodes);
  }

  /** The pool's budget: one, as {@code nodes}. */
  static void budget(NodePool of, String nodes) {
    NodePool.Budget budget = new NodePool.Budget();
    budget.nodes = nodes;
    of.getSpec().disruption.budgets = new ArrayList<>(List.of(budget));
  }

  /**
   * An initialized NodeClaim of the type, with its Node of the same name, its pods last changed at
   * {@link #T0}.
   */
  NodeClaim node(String name, InstanceType type) {
    return node(name, type, pool);
  }

  /** As {@link #node(String, InstanceType)}, of that pool. */
  NodeClaim node(String name, InstanceType type, NodePool of) {
    NodeClaim claim = new NodeClaim();
    claim.getMetadata().setName(name);
    claim.getMetadata().setUid(name + "-uid");
    claim.getMetadata().setResourceVersion("1");
    claim.getMetadata().setCreationTimestamp(T0.toString());
    claim
        .getMetadata()
        .setLabels(
            new HashMap<>(
                Map.of(
                    WellKnown.NODEPOOL_LABEL,
                    of.getMetadata().getName(),
                    WellKnown.INSTANCE_TYPE_LABEL,
                    type.name())));
    claim.getSpec().nodeClassRef = of.getSpec().template.spec.nodeClassRef;
    claim.setStatus(new NodeClaim.Status());
    claim.getStatus().nodeName = name;
    claim.getStatus().lastPodEventTime = T0.toString();
    Conditions.set(claim.getStatus().conditions, Conditions.LAUNCHED, true, "Launched", "");
    Conditions.set(claim.getStatus().conditions, Conditions.INITIALIZED, true, "Initialized", "");
    claims.add(claim);
    nodes.add(readyNode(name));
    return claim;
  }

  /** A Node of that name, Ready. */
  static Node readyNode(String name) {
    return new NodeBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .endSpec()
        .withNewStatus()
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .endCondition()
        .endStatus()
        .build();
  }

  /** Makes the pod its controller's: a DaemonSet's, a StatefulSet's, a ReplicaSet's. */
  static Pod ownedBy(Pod pod, String apiVersion, String kind) {
    pod.getMetadata()
        .setOwnerReferences(
            List.of(
                new OwnerReferenceBuilder()
                    .withApiVersion(apiVersion)
                    .withKind(kind)
                    .withName("owner")
                    .withUid("owner-uid")
                    .withController(true)
                    .build()));
    return pod;
  }

  /**
   * Labels the pod {@code app: <app>} and keeps it off any node another such pod is on (required
   * anti-affinity over hostnames).
   */
  static void oneAPerNode(Pod pod, String app) {
    pod.getMetadata().setLabels(Map.of("app", app));
    pod.getSpec()
        .setAffinity(
            new AffinityBuilder()
                .withNewPodAntiAffinity()
                .addNewRequiredDuringSchedulingIgnoredDuringExecution()
                .withTopologyKey(WellKnown.HOSTNAME_LABEL)
                .withNewLabelSelector()
                .withMatchLabels(Map.of("app", app))
                .endLabelSelector()
                .endRequiredDuringSchedulingIgnoredDuringExecution()
                .endPodAntiAffinity()
                .build());
  }

  /** Sets an annotation on the object. */
  static void annotate(HasMetadata object, String key, String value) {
    Map<String, String> annotations =
        object.getMetadata().getAnnotations() == null
            ? new HashMap<>()
            : new HashMap<>(object.getMetadata().getAnnotations());
    annotations.put(key, value);
    object.getMetadata().setAnnotations(annotations);
  }

  /**
   * Stamps the claim with a NodePool hash its pool does not have (same hash version): upstream's
   * {@code NodePoolDrifted}, which the pass marks {@code Drifted}.
   */
  static NodeClaim staleHash(NodeClaim claim) {
    annotate(claim, Hashes.NODEPOOL_HASH_ANNOTATION, "stale");
    annotate(claim, Hashes.NODEPOOL_HASH_VERSION_ANNOTATION, Hashes.NODEPOOL_HASH_VERSION);
    return claim;
  }

  /** A running pod bound to the node, requesting {@code cpuMilli}. */
  Pod pod(String name, String node, long cpuMilli) {
    Pod pod = request(name, cpuMilli);
    pod.getSpec().setNodeName(node);
    pod.getStatus().setPhase("Running");
    pods.add(pod);
    return pod;
  }

  /** A pod kube-scheduler found no place for. */
  Pod pending(String name, long cpuMilli) {
    Pod pod = request(name, cpuMilli);
    pod.getStatus().setPhase("Pending");
    pod.getStatus()
        .getConditions()
        .add(
            new PodConditionBuilder()
                .withType("PodScheduled")
                .withStatus("False")
                .withReason("Unschedulable")
                .build());
    pods.add(pod);
    return pod;
  }

  /**
   * A Ready pod bound to the node that a PodDisruptionBudget lets none of go ({@code
   * maxUnavailable: 0}).
   */
  Pod guarded(String name, String node) {
    Pod pod = pod(name, node, 500);
    pod.getMetadata().setLabels(Map.of("app", name));
    pod.getStatus()
        .getConditions()
        .add(new PodConditionBuilder().withType("Ready").withStatus("True").build());
    pdbs.add(
        new PodDisruptionBudgetBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace("default")
            .endMetadata()
            .withNewSpec()
            .withMaxUnavailable(new IntOrString(0))
            .withNewSelector()
            .withMatchLabels(Map.of("app", name))
            .endSelector()
            .endSpec()
            .build());
    return pod;
  }

  private static Pod request(String name, long cpuMilli) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("default")
        .withUid(name + "-uid")
        .endMetadata()
        .withNewSpec()
        .addNewContainer()
        .withName("main")
        .withNewResources()
        .addToRequests("cpu", new Quantity(cpuMilli + "m"))
        .endResources()
        .endContainer()
        .endSpec()
        .withNewStatus()
        .endStatus()
        .build();
  }

  Map<String, List<Pod>> podsByNode() {
    return Disruption.podsToMove(pods);
  }

  /** The candidates a pass at {@code now} builds. */
  List<Candidate> candidates(Instant now) {
    return candidates(now, (claim, node, why) -> {});
  }

  /** As {@link #candidates(Instant)}, telling {@code blocked} why a node is left be. */
  List<Candidate> candidates(Instant now, Candidate.Blocked blocked) {
    Map<String, Node> byName = new HashMap<>();
    nodes.forEach(n -> byName.put(n.getMetadata().getName(), n));
    List<NodeClaim> initialized = claims.stream().filter(Candidate::initialized).toList();
    return Candidate.of(
        initialized,
        Disruption.podsBound(pods),
        byName,
        pools,
        PodBudgets.of(pdbs, pods, Set.of()),
        now,
        blocked);
  }

  /** A pass over the cluster as it is, its commands started by {@code starter}. */
  Pass pass(Pass.Starter starter) throws Exception {
    Simulation simulation = new Simulation(scheduler, capacity(), claims, pods, podsByNode());
    return new Pass(simulation, simulation.holdingBuffers(), starter);
  }

  /** As {@link #pass(Pass.Starter)}, consolidation's moves counted in {@code metrics}. */
  Pass pass(Pass.Starter starter, KarpenterMetrics metrics) throws Exception {
    Simulation simulation = new Simulation(scheduler, capacity(), claims, pods, podsByNode());
    return new Pass(simulation, simulation.holdingBuffers(), starter, metrics, null);
  }

  /** The candidates of a pass at {@code now} the method may take. */
  List<Candidate> eligible(Method method, Pass pass, Instant now) {
    return Disruption.eligible(method, candidates(now), pass);
  }

  NodePoolBudgets budgets(Method method, Instant now) {
    Map<String, Node> byName = new HashMap<>();
    nodes.forEach(n -> byName.put(n.getMetadata().getName(), n));
    return new NodePoolBudgets(method.reason(), claims, byName, now);
  }

  /**
   * The capacity as the provisioner would make it: each claim not being deleted as a node with what
   * its pods leave free, the pool, both types launchable.
   */
  Capacity.Source capacity() {
    return (listed, all) -> {
      Map<String, NodePoolView> views = new LinkedHashMap<>();
      pools.forEach(
          (name, p) ->
              views.put(
                  name,
                  new NodePoolView(
                      name, 0, Map.of(), p.getSpec().template.spec.requirements, List.of(), null)));
      Map<String, List<Pod>> byNode = Disruption.podsToMove(all);
      Map<NodeClaim, Scheduler.PlannedNode> planned = new LinkedHashMap<>();
      for (NodeClaim claim : listed) {
        if (claim.getMetadata().getDeletionTimestamp() != null) {
          continue;
        }
        String typeName = claim.getMetadata().getLabels().get(WellKnown.INSTANCE_TYPE_LABEL);
        InstanceType type =
            small.name().equals(typeName) ? small : large.name().equals(typeName) ? large : null;
        if (type == null) {
          continue; // of no type there is: nothing to price or place pods on
        }
        NodePoolView view = views.get(Candidate.poolOf(claim));
        if (view == null) {
          continue; // of no NodePool there is: not the scheduler's to place pods on
        }
        List<PodRequest> running =
            byNode.getOrDefault(claim.getStatus().nodeName, List.of()).stream()
                .map(PodRequests::of)
                .toList();
        Resources bound =
            running.stream().map(PodRequest::requests).reduce(Resources.NONE, Resources::plus);
        Map<String, String> labels = new HashMap<>(Scheduler.labels(view, type));
        labels.putAll(claim.getMetadata().getLabels());
        labels.put(WellKnown.HOSTNAME_LABEL, claim.getStatus().nodeName);
        planned.put(
            claim,
            new Scheduler.PlannedNode(
                view,
                type,
                running,
                scheduler.usable(view, type).minus(bound),
                labels,
                taints.getOrDefault(claim.getStatus().nodeName, List.of())));
      }
      return new Capacity() {
        @Override
        public Map<NodeClaim, Scheduler.PlannedNode> nodes() {
          return planned;
        }

        @Override
        public List<NodePoolView> pools() {
          return List.copyOf(views.values());
        }

        @Override
        public List<InstanceType> launchable() {
          simulations++;
          return List.of(small, large);
        }

        @Override
        public List<NodeClaim> launch(
            List<Scheduler.PlannedNode> nodes, String reason, double priceBelow) {
          if (!machines) {
            return null;
          }
          launched.add(nodes);
          List<NodeClaim> made = new ArrayList<>();
          for (Scheduler.PlannedNode node : nodes) {
            NodeClaim claim = new NodeClaim();
            claim.getMetadata().setName("replacement-" + launched.size() + "-" + made.size());
            made.add(claim);
          }
          return made;
        }
      };
    };
  }
}
