package io.warmmetal.controller.instances;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.cloudprovider.Catalog;
import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.cloudprovider.CloudProviderException.NodeClassNotReady;
import io.warmmetal.controller.cloudprovider.CloudProviderException.NotFound;
import io.warmmetal.controller.cloudprovider.Instance;
import io.warmmetal.controller.cloudprovider.Launched;
import io.warmmetal.controller.cloudprovider.RepairPolicy;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass.PreJoined;
import io.warmmetal.controller.state.ClusterState;
import io.warmmetal.controller.state.Definitions;
import io.warmmetal.controller.state.InstanceTypes;
import io.warmmetal.protocol.MalformedFrame;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The cloud provider over WarmMetal's instances API: each node class names its API and the Secret
 * with its token; shapes are kept fresh in the background ({@link ShapesCache}); a NodeClaim's
 * launch carries its join (a bootstrap token of its own, the node's labels and taints, the control
 * plane's version) and takes, in this order, a machine pre-joined for it, a warm one, one being
 * prepared, and (unless the node class says no) one in standby.
 */
public final class WarmMetalCloudProvider implements CloudProvider, AutoCloseable {
  /** How long the bootstrap token a join carries lives. */
  static final Duration JOIN_TOKEN_TTL = Duration.ofHours(1);

  /**
   * What makes a WarmMetal node unhealthy: AWS's kubelet policies — its {@code Ready} condition
   * {@code False} or {@code Unknown} (the kubelet silent: the node lifecycle controller sets it)
   * for 30 minutes. AWS's other five ({@code AcceleratedHardwareReady}, {@code StorageReady},
   * {@code NetworkingReady}, {@code KernelReady}, {@code ContainerRuntimeReady}) are conditions
   * only EKS's node monitoring agent sets; nothing on a WarmMetal node does, and a condition of the
   * same name from another agent need not mean the same.
   */
  public static final List<RepairPolicy> REPAIR_POLICIES =
      List.of(
          new RepairPolicy("Ready", "False", Duration.ofMinutes(30)),
          new RepairPolicy("Ready", "Unknown", Duration.ofMinutes(30)));

  private final KubernetesClient kube;
  private final Definitions defs;
  private final Credentials credentials;
  private final ControlPlaneVersion controlPlane;
  private final ShapesCache shapes;

  /**
   * @param shapesEvery how often each node class's shapes are read again
   * @param onInstanceTypesChanged told when what a node class offers changes (a pass is due)
   */
  public WarmMetalCloudProvider(
      KubernetesClient kube,
      Definitions defs,
      Duration shapesEvery,
      Runnable onInstanceTypesChanged) {
    this.kube = kube;
    this.defs = defs;
    this.credentials = new Credentials(kube, Clock.systemUTC());
    this.controlPlane = new ControlPlaneVersion(kube);
    this.shapes =
        new ShapesCache(this::readCatalog, shapesEvery, Clock.systemUTC(), onInstanceTypesChanged);
  }

  private Catalog readCatalog(WarmMetalNodeClass nodeClass)
      throws CloudProviderException, InterruptedException {
    var spec = nodeClass.getSpec();
    var read =
        credentials.api(nodeClass).shapes(spec.zoneLabelOrDefault(), spec.regionLabelOrDefault());
    return new Catalog(
        ShapeTypes.of(read, nodeClass),
        ShapeTypes.available(read, spec.launchesFromStandby()),
        Clock.systemUTC().instant());
  }

  @Override
  public Catalog instanceTypes(WarmMetalNodeClass nodeClass) throws CloudProviderException {
    return shapes.get(nodeClass);
  }

  @Override
  public boolean instanceTypesKnown(WarmMetalNodeClass nodeClass) {
    return shapes.known(nodeClass);
  }

  @Override
  public List<RepairPolicy> repairPolicies() {
    return REPAIR_POLICIES;
  }

  @Override
  public void check(WarmMetalNodeClass nodeClass) throws CloudProviderException {
    try {
      readCatalog(nodeClass);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public Launched create(NodeClaim claim) throws CloudProviderException {
    WarmMetalNodeClass nodeClass = defs.nodeClass(claim.getSpec());
    String poolName = claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL);
    NodePool pool = defs.pool(poolName);
    if (nodeClass == null) {
      throw new NodeClassNotReady("NodeClass is not found or not ready");
    }
    if (pool == null) {
      throw new NodeClassNotReady("NodePool " + poolName + " is not found or not valid");
    }
    try {
      Joins.kubelet(nodeClass);
    } catch (MalformedFrame e) {
      throw new NodeClassNotReady(
          "WarmMetalNodeClass " + nodeClass.getMetadata().getName() + ": " + e.getMessage());
    }
    InstancesApi api = credentials.api(nodeClass);
    ObjectNode request = InstancesApi.object();
    request.put("clientToken", claim.getMetadata().getUid());
    // Warm first, then preparing, then (unless the node class says no) standby — switched on and
    // prepared: a machine minutes away is nearer than none.
    request.put("allowPreparing", true);
    request.put("allowStandby", nodeClass.getSpec().launchesFromStandby());
    // Before all of those, a node the node class keeps joined ahead of time (spec.preJoined): no
    // join at all.
    request.put("allowPreJoined", true);
    ArrayNode shapeNames = request.putArray("shapes");
    ClusterState.acceptableTypes(claim).forEach(shapeNames::add);
    request
        .putObject("labels")
        .put(WellKnown.NODEPOOL_LABEL, poolName)
        .put(WellKnown.NODECLAIM_LABEL, claim.getMetadata().getName())
        .put(WellKnown.NODECLAIM_UID_LABEL, claim.getMetadata().getUid());
    // The Node's labels: the pool's, and a single value a requirement leaves. A claim planned in a
    // zone (or region): only a machine there, and the Node labelled so, under the node class's
    // machine label keys (racks as zones).
    Map<String, String> nodeLabels = new HashMap<>(InstanceTypes.poolLabels(pool));
    Map<String, String> machineLabels = new HashMap<>();
    for (Requirement r : claim.getSpec().requirements) {
      if (!"In".equals(r.getOperator())
          || r.getValues().size() != 1
          || InstanceTypes.defines(r.getKey())) {
        continue;
      }
      if (WellKnown.ZONE_LABEL.equals(r.getKey())) {
        machineLabels.put(nodeClass.getSpec().zoneLabelOrDefault(), r.getValues().get(0));
      } else if (WellKnown.REGION_LABEL.equals(r.getKey())) {
        machineLabels.put(nodeClass.getSpec().regionLabelOrDefault(), r.getValues().get(0));
      }
      nodeLabels.put(r.getKey(), r.getValues().get(0));
    }
    boolean placed = !machineLabels.isEmpty();
    // Owned servers are paid for whether used or not: Karpenter's on-demand. The instance type (the
    // shape the API picks) and the zone (the machine's) the join adds.
    nodeLabels.put(WellKnown.CAPACITY_TYPE_LABEL, "on-demand");
    List<Taint> taints = new ArrayList<>(claim.getSpec().taints);
    taints.addAll(claim.getSpec().startupTaints);
    taints.add(
        new TaintBuilder().withKey(WellKnown.UNREGISTERED_TAINT).withEffect("NoExecute").build());
    String token = BootstrapTokens.forClaim(kube, claim.getMetadata().getUid(), JOIN_TOKEN_TTL);
    Instance instance = launch(api, nodeClass, request, machineLabels, nodeLabels, taints, token);
    return describe(api, nodeClass, instance, !placed);
  }

  /** The request's machine labels (where, and the node class's image) and join; launched. */
  private Instance launch(
      InstancesApi api,
      WarmMetalNodeClass nodeClass,
      ObjectNode request,
      Map<String, String> machineLabels,
      Map<String, String> nodeLabels,
      List<Taint> taints,
      String bootstrapToken)
      throws CloudProviderException {
    // A node class that names its image takes only machines booted from it (the API labels each
    // machine with it).
    String image = nodeClass.getSpec().image;
    if (image != null && !image.isBlank()) {
      machineLabels.put(WellKnown.IMAGE_MACHINE_LABEL, image);
    }
    if (!machineLabels.isEmpty()) {
      ObjectNode labels = request.putObject("machineLabels");
      machineLabels.forEach(labels::put);
    }
    request.set(
        "kubernetes", Joins.of(nodeClass, bootstrapToken, nodeLabels, taints, controlPlane.get()));
    try {
      return api.launch(request);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CloudProviderException.Unavailable("interrupted", Duration.ZERO);
    } finally {
      shapes.refresh(nodeClass); // a machine taken (or none there): what it offers changed
    }
  }

  /**
   * What the claim's machine is, read at once: the node image it booted (as upstream's claims
   * record their AMI; drift compares it with the node class's), and — for a claim launched in no
   * particular zone ({@code locate}) — its zone and region, as upstream's claims know their
   * offering's. A machine that cannot be read now leaves them to the Node's own labels.
   */
  private Launched describe(
      InstancesApi api, WarmMetalNodeClass nodeClass, Instance instance, boolean locate) {
    try {
      InstancesApi.Machine machine = api.machine(instance.machineId());
      return new Launched(
          instance,
          locate ? machine.labels().get(nodeClass.getSpec().zoneLabelOrDefault()) : null,
          locate ? machine.labels().get(nodeClass.getSpec().regionLabelOrDefault()) : null,
          machine.imageVersion(),
          machine.capacity());
    } catch (CloudProviderException e) {
      return new Launched(instance, null, null, null);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Launched(instance, null, null, null);
    }
  }

  @Override
  public void delete(NodeClaim claim) throws CloudProviderException {
    WarmMetalNodeClass nodeClass = defs.nodeClass(claim.getSpec());
    String recorded =
        claim.getMetadata().getAnnotations() == null
            ? null
            : claim.getMetadata().getAnnotations().get(WellKnown.INSTANCE_ANNOTATION);
    if (nodeClass == null) {
      throw new NodeClassNotReady(
          "its node class is gone, so its instance ("
              + (recorded == null ? "unrecorded" : recorded)
              + ") cannot be terminated");
    }
    InstancesApi api = credentials.api(nodeClass);
    Set<String> ids = new TreeSet<>();
    if (recorded != null) {
      ids.add(recorded);
    }
    try {
      for (Instance instance :
          api.selected(WellKnown.NODECLAIM_UID_LABEL + "=" + claim.getMetadata().getUid(), null)) {
        if (!Instance.TERMINATED.equals(instance.state())) {
          ids.add(instance.id());
        }
      }
      boolean any = false;
      for (String id : ids) {
        try {
          api.terminate(id);
          any = true;
        } catch (NotFound gone) {
          // terminated and forgotten already
        }
      }
      if (!any) {
        throw new NotFound("NodeClaim " + claim.getMetadata().getName() + " has no instance");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CloudProviderException.Unavailable("interrupted", Duration.ZERO);
    }
  }

  @Override
  public List<Instance> list(WarmMetalNodeClass nodeClass) throws CloudProviderException {
    return live(nodeClass, WellKnown.NODECLAIM_UID_LABEL);
  }

  @Override
  public List<Instance> listStandby(WarmMetalNodeClass nodeClass) throws CloudProviderException {
    return live(nodeClass, WellKnown.STANDBY_OF_LABEL + "=" + nodeClass.getMetadata().getName())
        .stream()
        .filter(Instance::standby)
        .toList();
  }

  /**
   * The live instances the selector matches, each once. Pending ones are read first, then running
   * ones: an instance whose join finishes between the two reads is in both, and is counted once, as
   * running (twice, the standby would retire two nodes it still needs as "more than asked for"). In
   * the other order it would be in neither.
   */
  private List<Instance> live(WarmMetalNodeClass nodeClass, String selector)
      throws CloudProviderException {
    InstancesApi api = credentials.api(nodeClass);
    Map<String, Instance> live = new LinkedHashMap<>();
    try {
      for (String state : List.of("pending", Instance.RUNNING)) {
        api.selected(selector, state).forEach(i -> live.put(i.id(), i));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CloudProviderException.Unavailable("interrupted", Duration.ZERO);
    }
    return List.copyOf(live.values());
  }

  @Override
  public Instance createStandby(WarmMetalNodeClass nodeClass, PreJoined entry)
      throws CloudProviderException {
    InstancesApi api = credentials.api(nodeClass);
    String launch = UUID.randomUUID().toString();
    ObjectNode request = InstancesApi.object();
    // A fresh token per launch: a launch whose answer was lost is found by the next count (the
    // API is the record) and, if one too many, retired there.
    request.put("clientToken", "standby-" + launch);
    request.put("standby", true);
    request.put("allowPreparing", true);
    request.put("allowStandby", nodeClass.getSpec().launchesFromStandby());
    request.putArray("shapes").add(entry.instanceType);
    request
        .putObject("labels")
        .put(WellKnown.STANDBY_OF_LABEL, nodeClass.getMetadata().getName())
        .put(WellKnown.STANDBY_ENTRY_LABEL, entry.key())
        .put(WellKnown.NODECLASS_HASH_LABEL, nodeClass.hash());
    Map<String, String> machineLabels = new HashMap<>();
    if (entry.zone != null) {
      machineLabels.put(nodeClass.getSpec().zoneLabelOrDefault(), entry.zone);
    }
    return launch(
        api,
        nodeClass,
        request,
        machineLabels,
        Map.of(
            WellKnown.STANDBY,
            nodeClass.getMetadata().getName(),
            WellKnown.CAPACITY_TYPE_LABEL,
            "on-demand"),
        standbyTaints(),
        BootstrapTokens.forClaim(kube, launch, JOIN_TOKEN_TTL));
  }

  /** The taints a standby node joins with: nothing but what tolerates everything lands there. */
  private static List<Taint> standbyTaints() {
    return List.of(
        new TaintBuilder().withKey(WellKnown.STANDBY).withEffect("NoSchedule").build(),
        new TaintBuilder().withKey(WellKnown.STANDBY).withEffect("NoExecute").build());
  }

  @Override
  public void terminate(WarmMetalNodeClass nodeClass, String instanceId)
      throws CloudProviderException {
    try {
      credentials.api(nodeClass).terminate(instanceId);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CloudProviderException.Unavailable("interrupted", Duration.ZERO);
    }
  }

  @Override
  public void close() {
    shapes.close();
  }
}
