package io.warmmetal.controller.state;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.warmmetal.controller.cloudprovider.Catalog;
import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.NodePoolView;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.scheduling.TypeOverlay;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster as provisioning and consolidation both plan against it: the NodePools with their node
 * classes and the fleet's shapes, each NodePool's limits less what its nodes already hold, and
 * every NodeClaim of ours as a node with what its bound pods leave free (the same for a node on its
 * way and a node that is ready).
 */
public final class ClusterState {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterState.class);

  public final Map<String, NodePool> pools = new HashMap<>();

  /** Each pool's instance types, as its NodeOverlays change them. */
  public final Map<String, List<InstanceType>> typesByPool = new HashMap<>();

  /** How each pool's NodeOverlays change instance types (by pool name). */
  private final Map<String, TypeOverlay> overlays = new HashMap<>();

  public final List<NodePoolView> views = new ArrayList<>();

  /**
   * Every type of the pools' node classes, as the fleet offers them: a plan applies each pool's
   * NodeOverlays to them ({@link NodePoolView#overlay}).
   */
  public final List<InstanceType> allTypes = new ArrayList<>();

  /**
   * Types with a machine to be had now (warm or being prepared): the ones worth planning new nodes
   * of.
   */
  public final Set<String> available = new HashSet<>();

  /**
   * NodePools whose node class's instance types are being read for the first time: left out, but
   * only until the read answers (a plan may wait for it rather than call their pods unschedulable).
   */
  public final Set<String> unread = new HashSet<>();

  /** Each NodeClaim not being deleted, as a node the scheduler can place pods on. */
  public final Map<NodeClaim, Scheduler.PlannedNode> nodes = new LinkedHashMap<>();

  /**
   * What each NodePool's NodeClaims cost together, from its point of view: each claim at its type's
   * price in its zone, as the pool's NodeOverlays have it, until it is gone (upstream's cost
   * tracker; not a bill).
   */
  public final Map<String, Double> costByPool = new HashMap<>();

  /**
   * Every other Node (not ours, or ours going away): its pods count for topology and affinity as
   * upstream counts every pod in the cluster, though no pod is planned onto it.
   */
  public final List<Scheduler.Bystander> bystanders = new ArrayList<>();

  /** How pods' volumes are counted against nodes' CSI attach limits. */
  private final VolumeUsage volumeUsage;

  private ClusterState(VolumeUsage volumeUsage) {
    this.volumeUsage = volumeUsage;
  }

  /** The pod as plans see it: its requests, placement and the volumes it attaches. */
  public PodRequest request(Pod pod) {
    return volumeUsage.request(pod);
  }

  /**
   * @param scheduler what a node has for pods ({@link Scheduler#usable})
   * @param daemonSets the cluster's DaemonSets: their pods count against the nodes they would land
   *     on
   * @param volumeUsage the volumes pods attach and the limits of registered nodes' CSI drivers
   */
  public static ClusterState of(
      Definitions defs,
      CloudProvider cloud,
      List<NodeClaim> claims,
      List<Pod> pods,
      Scheduler scheduler,
      List<DaemonSet> daemonSets,
      List<Node> nodeList,
      VolumeUsage volumeUsage)
      throws Exception {
    Map<String, Node> nodesByName = new HashMap<>();
    nodeList.forEach(n -> nodesByName.put(n.getMetadata().getName(), n));
    List<PodRequest> daemons = daemonSets.stream().map(PodRequests::daemon).toList();
    ClusterState state = new ClusterState(volumeUsage);
    Map<String, Resources> poolCapacity = new HashMap<>();
    for (NodePool pool : defs.pools()) {
      WarmMetalNodeClass nodeClass = defs.nodeClass(pool.getSpec().template.spec);
      if (nodeClass == null) {
        LOG.debug(
            "NodePool {} names no WarmMetalNodeClass that exists (its status says so)",
            pool.getMetadata().getName());
        continue;
      }
      Catalog catalog;
      try {
        catalog = cloud.instanceTypes(pool, nodeClass); // as last read: no I/O
      } catch (CloudProviderException.UnevaluatedNodePool e) {
        LOG.debug(
            "NodePool {}: skipping, awaiting nodeoverlay evaluation", pool.getMetadata().getName());
        continue;
      } catch (CloudProviderException e) {
        if (cloud.instanceTypesKnown(nodeClass)) {
          LOG.debug(
              "NodePool {}: its instance types cannot be read ({}); left out of this pass",
              pool.getMetadata().getName(),
              e.getMessage());
        } else {
          state.unread.add(pool.getMetadata().getName());
        }
        continue;
      }
      List<InstanceType> types = catalog.types();
      state.available.addAll(catalog.available());
      String name = pool.getMetadata().getName();
      state.pools.put(name, pool);
      state.overlays.put(name, catalog.overlay());
      state.typesByPool.put(
          name,
          catalog.overlay() == TypeOverlay.NONE
              ? types
              : types.stream().map(catalog.overlay()::apply).toList());
      types.stream()
          .filter(t -> state.allTypes.stream().noneMatch(a -> a.name().equals(t.name())))
          .forEach(state.allTypes::add);
    }
    Map<String, List<PodRequest>> podsByNode = new HashMap<>();
    for (Pod pod : pods) {
      // DaemonSet pods are in the overhead every node is planned with already: not counted twice.
      if (Pods.boundAndMovable(pod)) {
        podsByNode
            .computeIfAbsent(pod.getSpec().getNodeName(), n -> new ArrayList<>())
            .add(volumeUsage.request(pod));
      }
    }
    Map<NodeClaim, InstanceType> typed = new LinkedHashMap<>();
    for (NodeClaim claim : claims) {
      String pool = claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL);
      String typeName = instanceType(claim);
      // Its pool's copy of the type: priced and sized as the pool's NodeOverlays have it, at its
      // zone's price.
      InstanceType type =
          state.typesByPool.getOrDefault(pool, List.of()).stream()
              .filter(x -> x.name().equals(typeName))
              .findFirst()
              .map(x -> x.pricedIn(claim.getMetadata().getLabels().get(WellKnown.ZONE_LABEL)))
              .orElse(null);
      if (type != null && state.pools.containsKey(pool)) {
        poolCapacity.merge(
            pool, type.allocatable(), Resources::plus); // a node counts against limits until gone
        state.costByPool.merge(pool, type.price(), Double::sum);
        if (claim.getMetadata().getDeletionTimestamp() == null) {
          typed.put(claim, type);
        }
      }
    }
    for (NodePool pool : state.pools.values()) {
      state.views.add(
          view(
              pool,
              poolCapacity.getOrDefault(pool.getMetadata().getName(), Resources.NONE),
              daemons,
              state.overlays.get(pool.getMetadata().getName())));
    }
    typed.forEach(
        (claim, type) -> {
          String nodeName = claim.getStatus() == null ? null : claim.getStatus().nodeName;
          List<PodRequest> running =
              nodeName == null ? List.of() : podsByNode.getOrDefault(nodeName, List.of());
          Resources bound =
              running.stream().map(PodRequest::requests).reduce(Resources.NONE, Resources::plus);
          String pool = claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL);
          NodePoolView view =
              state.views.stream().filter(v -> v.name().equals(pool)).findFirst().orElseThrow();
          // The labels it has (its zone once registered) over those its pool and type give; its
          // hostname once known.
          Map<String, String> labels = new HashMap<>(Scheduler.labels(view, type));
          labels.putAll(claim.getMetadata().getLabels());
          if (nodeName != null) {
            labels.put(WellKnown.HOSTNAME_LABEL, nodeName);
          }
          Node node = nodeName == null ? null : nodesByName.get(nodeName);
          // A registered Node says what it has (the kubelet's reservations, its max pods); one on
          // its way has what its shape promises.
          Resources usable =
              node == null
                  ? scheduler.usable(view, type)
                  : scheduler.usableOn(view, type, allocatable(type, node));
          state.nodes.put(
              claim,
              new Scheduler.PlannedNode(
                  view,
                  type,
                  running,
                  usable.minus(bound),
                  labels,
                  taints(claim, node, view),
                  node == null ? Map.of() : volumeUsage.limits(nodeName)));
        });
    Set<String> planned = new HashSet<>();
    state.nodes.keySet().stream()
        .filter(c -> c.getStatus() != null && c.getStatus().nodeName != null)
        .forEach(c -> planned.add(c.getStatus().nodeName));
    for (Node node : nodeList) {
      String name = node.getMetadata().getName();
      if (!planned.contains(name)) {
        Map<String, String> labels = new HashMap<>();
        labels.put(WellKnown.HOSTNAME_LABEL, name); // as upstream: the kubelet may not have set it
        if (node.getMetadata().getLabels() != null) {
          labels.putAll(node.getMetadata().getLabels());
        }
        state.bystanders.add(
            new Scheduler.Bystander(
                name, labels, ownTaints(node), podsByNode.getOrDefault(name, List.of())));
      }
    }
    return state;
  }

  /**
   * What the Node reports allocatable, over what its type promises: each resource the kubelet
   * reports is as it reports it (its reservations and max pods applied); those it does not report
   * yet stay as promised.
   */
  static Resources allocatable(InstanceType type, Node node) {
    Map<String, Quantity> reported =
        node.getStatus() == null ? null : node.getStatus().getAllocatable();
    if (reported == null || reported.isEmpty()) {
      return type.allocatable();
    }
    Resources promised = type.allocatable();
    Resources real = PodRequests.of(reported);
    Map<String, Long> extended = new HashMap<>(promised.extended());
    extended.putAll(real.extended());
    return new Resources(
        reported.containsKey("cpu") ? real.cpuMilli() : promised.cpuMilli(),
        reported.containsKey("memory") ? real.memoryBytes() : promised.memoryBytes(),
        extended);
  }

  public NodePoolView view(String pool) {
    return views.stream().filter(v -> v.name().equals(pool)).findFirst().orElse(null);
  }

  /**
   * The taints pods must tolerate to go there: an initialized node's own (a cordon, a disruption
   * under way, what an operator added); one not up yet will have its pool's (its not-ready and
   * startup taints go away).
   */
  private static List<Taint> taints(NodeClaim claim, Node node, NodePoolView view) {
    if (node == null
        || claim.getStatus() == null
        || !Conditions.isTrue(claim.getStatus().conditions, Conditions.INITIALIZED)) {
      return view.taints();
    }
    return ownTaints(node);
  }

  /** The Node's taints, a cordon among them. */
  private static List<Taint> ownTaints(Node node) {
    if (node.getSpec() == null) {
      return List.of();
    }
    List<Taint> taints =
        new ArrayList<>(
            node.getSpec().getTaints() == null ? List.of() : node.getSpec().getTaints());
    if (Boolean.TRUE.equals(node.getSpec().getUnschedulable())) {
      taints.add(
          new TaintBuilder()
              .withKey("node.kubernetes.io/unschedulable")
              .withEffect("NoSchedule")
              .build());
    }
    return taints;
  }

  /** The type the claim got (once launched), else the one it was planned for. */
  static String instanceType(NodeClaim claim) {
    String launched = claim.getMetadata().getLabels().get(WellKnown.INSTANCE_TYPE_LABEL);
    if (launched != null) {
      return launched;
    }
    List<String> acceptable = acceptableTypes(claim);
    return acceptable.isEmpty() ? null : acceptable.get(0);
  }

  public static List<String> acceptableTypes(NodeClaim claim) {
    return claim.getSpec().requirements.stream()
        .filter(
            r -> WellKnown.INSTANCE_TYPE_LABEL.equals(r.getKey()) && "In".equals(r.getOperator()))
        .findFirst()
        .map(Requirement::getValues)
        .orElse(List.of());
  }

  /** The pool as the scheduler sees it; its limits less the capacity of the nodes it has. */
  private static NodePoolView view(
      NodePool pool, Resources used, List<PodRequest> daemons, TypeOverlay overlay) {
    var template = pool.getSpec().template;
    Resources remaining = null;
    if (pool.getSpec().limits != null) {
      Resources limit = PodRequests.of(pool.getSpec().limits);
      // A limit not given is none; a limit of 0 is 0 (upstream's way to stop a pool).
      remaining =
          new Resources(
                  pool.getSpec().limits.containsKey("cpu") ? limit.cpuMilli() : Long.MAX_VALUE / 4,
                  pool.getSpec().limits.containsKey("memory")
                      ? limit.memoryBytes()
                      : Long.MAX_VALUE / 4,
                  limit.extended())
              .minus(used.onlyExtended(limit.extended().keySet()));
    }
    return new NodePoolView(
        pool.getMetadata().getName(),
        pool.getSpec().weight == null ? 0 : pool.getSpec().weight,
        InstanceTypes.poolLabels(pool),
        template.spec.requirements,
        template.spec.taints,
        remaining,
        daemons,
        pool.isStatic(),
        overlay);
  }

  /**
   * The claim's Node: by name once registered, else by providerID (a Node whose registration was
   * not recorded).
   */
  public static Node nodeOf(NodeClaim claim, List<Node> nodes) {
    if (claim.getStatus() == null) {
      return null;
    }
    String name = claim.getStatus().nodeName;
    String provider = claim.getStatus().providerID;
    return nodes.stream()
        .filter(
            n ->
                n.getMetadata().getName().equals(name)
                    || (provider != null
                        && n.getSpec() != null
                        && provider.equals(n.getSpec().getProviderID())))
        .findFirst()
        .orElse(null);
  }
}
