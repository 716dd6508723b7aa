package io.warmmetal.controller.cloudprovider;

import io.warmmetal.controller.cloudprovider.CloudProviderException.NotFound;
import io.warmmetal.controller.cloudprovider.CloudProviderException.Unavailable;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.scheduling.InstanceType;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * A cloud provider in memory, as upstream's {@code fake.CloudProvider}: instance types as the test
 * sets them, launches idempotent by the claim's UID (a retry gets the same instance), errors queued
 * for the next calls. For tests of the controller's own decisions; what the real fleet does is
 * tested against the real API.
 */
public final class FakeCloudProvider implements CloudProvider {
  private final Map<String, Catalog> catalogs = new HashMap<>();
  private final Map<String, Instance> byClientToken = new LinkedHashMap<>();
  private final Deque<CloudProviderException> createErrors = new ArrayDeque<>();
  private final AtomicInteger ids = new AtomicInteger();

  /** Every create call, in order: the claims' UIDs (a retry appears twice). */
  public final List<String> createCalls = new ArrayList<>();

  /** Instances terminated, by id. */
  public final List<String> terminated = new ArrayList<>();

  /** Upstream's fake's repair policy: a Node whose {@code BadNode} is False for 30 minutes. */
  public static final RepairPolicy BAD_NODE =
      new RepairPolicy("BadNode", "False", Duration.ofMinutes(30));

  private List<RepairPolicy> repairPolicies = List.of(BAD_NODE);

  /** The repair policies from now on (upstream's fake's settable {@code RepairPolicy}). */
  public synchronized FakeCloudProvider repairPolicies(RepairPolicy... policies) {
    repairPolicies = List.of(policies);
    return this;
  }

  /** The node class offers these types, each with a machine to be had. */
  public synchronized FakeCloudProvider offer(String nodeClass, InstanceType... types) {
    catalogs.put(
        nodeClass,
        new Catalog(
            List.of(types),
            Set.copyOf(List.of(types).stream().map(InstanceType::name).toList()),
            Instant.EPOCH));
    return this;
  }

  /** The next create calls fail with these, in order. */
  public synchronized FakeCloudProvider failNextCreates(CloudProviderException... errors) {
    createErrors.addAll(List.of(errors));
    return this;
  }

  /** Live instances launched for claims. */
  public synchronized List<Instance> instances() {
    return byClientToken.values().stream()
        .filter(i -> !terminated.contains(i.id()))
        .collect(Collectors.toList());
  }

  @Override
  public synchronized Catalog instanceTypes(WarmMetalNodeClass nodeClass)
      throws CloudProviderException {
    Catalog catalog = catalogs.get(nodeClass.getMetadata().getName());
    if (catalog == null) {
      throw new Unavailable("no catalog", Duration.ZERO);
    }
    return catalog;
  }

  @Override
  public synchronized boolean instanceTypesKnown(WarmMetalNodeClass nodeClass) {
    return true;
  }

  @Override
  public synchronized Launched create(NodeClaim claim) throws CloudProviderException {
    String token = claim.getMetadata().getUid();
    createCalls.add(token);
    CloudProviderException error = createErrors.poll();
    if (error != null) {
      throw error;
    }
    Instance instance =
        byClientToken.computeIfAbsent(
            token,
            t -> {
              String id = "i-" + ids.incrementAndGet();
              String shape =
                  claim.getSpec().requirements.stream()
                      .filter(r -> WellKnown.INSTANCE_TYPE_LABEL.equals(r.getKey()))
                      .findFirst()
                      .map(r -> r.getValues().get(0))
                      .orElse("unknown");
              return new Instance(
                  id,
                  shape,
                  "m-" + id,
                  "warmmetal://m-" + id,
                  "pending",
                  Map.of(WellKnown.NODECLAIM_UID_LABEL, t),
                  false,
                  false,
                  Instant.EPOCH,
                  null);
            });
    return new Launched(instance, null, null, "v1-test");
  }

  @Override
  public synchronized void delete(NodeClaim claim) throws CloudProviderException {
    Instance instance = byClientToken.get(claim.getMetadata().getUid());
    if (instance == null || terminated.contains(instance.id())) {
      throw new NotFound("no instance");
    }
    terminated.add(instance.id());
  }

  @Override
  public synchronized List<Instance> list(WarmMetalNodeClass nodeClass) {
    return instances();
  }

  @Override
  public Instance createStandby(WarmMetalNodeClass nodeClass, WarmMetalNodeClass.PreJoined entry)
      throws CloudProviderException {
    throw new CloudProviderException.InsufficientCapacity("the fake keeps no standby");
  }

  @Override
  public List<Instance> listStandby(WarmMetalNodeClass nodeClass) {
    return List.of();
  }

  @Override
  public synchronized void terminate(WarmMetalNodeClass nodeClass, String instanceId)
      throws CloudProviderException {
    if (terminated.contains(instanceId)) {
      throw new NotFound(instanceId);
    }
    terminated.add(instanceId);
  }

  @Override
  public void check(WarmMetalNodeClass nodeClass) {}

  @Override
  public synchronized List<RepairPolicy> repairPolicies() {
    return repairPolicies;
  }
}
