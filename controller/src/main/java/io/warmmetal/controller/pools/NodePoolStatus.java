package io.warmmetal.controller.pools;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeClassReference;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.state.Definitions;
import java.math.BigDecimal;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes each NodePool's status as upstream's NodePool controllers do: {@code ValidationSucceeded}
 * (its problems, if any), {@code NodeClassReady} (its node class exists, is ours and is Ready),
 * {@code NodeRegistrationHealthy} (True once one of its nodes registered), {@code Ready}; how many
 * nodes it has and what they hold ({@code status.nodes}, {@code status.resources}). Written only
 * when something changed.
 */
public final class NodePoolStatus {
  private static final Logger LOG = LoggerFactory.getLogger(NodePoolStatus.class);

  private final KubernetesClient kube;
  private final Definitions defs;
  private final KarpenterMetrics metrics;
  private final RegistrationHealth health;

  public NodePoolStatus(
      KubernetesClient kube,
      Definitions defs,
      KarpenterMetrics metrics,
      RegistrationHealth health) {
    this.kube = kube;
    this.defs = defs;
    this.metrics = metrics;
    this.health = health;
  }

  /**
   * @param claims every NodeClaim of ours
   */
  public void reconcile(List<NodeClaim> claims) {
    Map<String, Map<String, Double>> usage = new HashMap<>();
    Map<String, Map<String, Double>> limits = new HashMap<>();
    for (NodePool pool : defs.managedPools()) {
      String name = pool.getMetadata().getName();
      List<NodeClaim> own =
          claims.stream()
              .filter(
                  c ->
                      name.equals(
                          c.getMetadata().getLabels() == null
                              ? null
                              : c.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL)))
              .toList();
      NodePool.Status desired = desired(pool, own);
      usage.put(name, amounts(desired.resources));
      limits.put(name, amounts(pool.getSpec().limits));
      if (!same(pool.getStatus(), desired)) {
        NodePool copy = new NodePool();
        copy.setMetadata(pool.getMetadata());
        copy.setSpec(pool.getSpec());
        copy.setStatus(desired);
        try {
          kube.resources(NodePool.class).resource(copy).updateStatus();
        } catch (KubernetesClientException e) {
          LOG.warn("NodePool {}: status not written ({}); next pass", name, e.getMessage());
        }
      }
    }
    metrics.nodePools(usage, limits);
    metrics.clusterNodes(claims.size());
  }

  /** Quantities as plain numbers (cores, bytes, counts), as upstream's gauges report them. */
  private static Map<String, Double> amounts(Map<String, Quantity> quantities) {
    Map<String, Double> amounts = new HashMap<>();
    if (quantities != null) {
      quantities.forEach((k, q) -> amounts.put(k, q.getNumericalAmount().doubleValue()));
    }
    return amounts;
  }

  NodePool.Status desired(NodePool pool, List<NodeClaim> claims) {
    NodePool.Status status = new NodePool.Status();
    if (pool.getStatus() != null) {
      pool.getStatus().conditions.forEach(c -> status.conditions.add(copy(c)));
    }
    List<String> problems = defs.problems(pool);
    if (problems.isEmpty()) {
      Conditions.set(
          status.conditions,
          Conditions.VALIDATION_SUCCEEDED,
          true,
          Conditions.VALIDATION_SUCCEEDED,
          "");
    } else {
      Conditions.set(
          status.conditions,
          Conditions.VALIDATION_SUCCEEDED,
          false,
          "NodePoolValidationFailed",
          String.join("; ", problems));
    }
    nodeClassReady(pool, status);
    RegistrationHealth.Outcome last = health.last(pool.getMetadata().getName());
    if (last != null && !last.registered()) {
      Conditions.set(
          status.conditions,
          Conditions.NODE_REGISTRATION_HEALTHY,
          false,
          "RegistrationFailed",
          last.message());
    } else if (last != null
        || claims.stream()
            .anyMatch(
                c ->
                    c.getStatus() != null
                        && Conditions.isTrue(c.getStatus().conditions, Conditions.REGISTERED))) {
      Conditions.set(
          status.conditions,
          Conditions.NODE_REGISTRATION_HEALTHY,
          true,
          Conditions.NODE_REGISTRATION_HEALTHY,
          "");
    } else if (Conditions.get(status.conditions, Conditions.NODE_REGISTRATION_HEALTHY) == null) {
      Conditions.set(
          status.conditions,
          Conditions.NODE_REGISTRATION_HEALTHY,
          "Unknown",
          "AwaitingReconciliation",
          "no node of this NodePool has registered yet");
    }
    Conditions.setReady(status.conditions, Conditions.NODEPOOL_READY_ON);
    status.nodes = (long) claims.size();
    status.resources = resources(claims);
    return status;
  }

  private void nodeClassReady(NodePool pool, NodePool.Status status) {
    NodeClassReference ref = pool.getSpec().template.spec.nodeClassRef;
    WarmMetalNodeClass nodeClass = defs.nodeClass(pool.getSpec().template.spec);
    if (ref == null || nodeClass == null) {
      String what =
          ref == null
              ? "no nodeClassRef"
              : ref.kind
                  + " '"
                  + ref.name
                  + "' ("
                  + ref.group
                  + ") not found on cluster"
                  + (WarmMetalNodeClass.KIND.equals(ref.kind)
                      ? ""
                      : "; the kind WarmMetal serves is WarmMetalNodeClass");
      Conditions.set(
          status.conditions, Conditions.NODE_CLASS_READY, false, "NodeClassNotFound", what);
      return;
    }
    status.nodeClassObservedGeneration = nodeClass.getMetadata().getGeneration();
    if (nodeClass.getMetadata().getDeletionTimestamp() != null) {
      Conditions.set(
          status.conditions,
          Conditions.NODE_CLASS_READY,
          false,
          "NodeClassTerminating",
          "NodeClass is Terminating");
      return;
    }
    Condition ready =
        nodeClass.getStatus() == null
            ? null
            : Conditions.get(nodeClass.getStatus().conditions, Conditions.READY);
    if (ready == null || "Unknown".equals(ready.getStatus())) {
      Conditions.set(
          status.conditions,
          Conditions.NODE_CLASS_READY,
          false,
          "NodeClassReadinessUnknown",
          "Node Class Readiness Unknown");
    } else if ("True".equals(ready.getStatus())) {
      Conditions.set(
          status.conditions, Conditions.NODE_CLASS_READY, true, Conditions.NODE_CLASS_READY, "");
    } else {
      Conditions.set(
          status.conditions,
          Conditions.NODE_CLASS_READY,
          false,
          ready.getReason(),
          ready.getMessage());
    }
  }

  /**
   * What the pool's nodes have (their capacity, once registered), summed, and the count of nodes.
   */
  private static Map<String, Quantity> resources(List<NodeClaim> claims) {
    Map<String, BigDecimal> sum = new HashMap<>();
    for (NodeClaim claim : claims) {
      if (claim.getStatus() != null && claim.getStatus().capacity != null) {
        claim
            .getStatus()
            .capacity
            .forEach((k, q) -> sum.merge(k, q.getNumericalAmount(), BigDecimal::add));
      }
    }
    Map<String, Quantity> resources = new HashMap<>();
    sum.forEach(
        (k, v) ->
            resources.put(
                k,
                k.equals("memory") || k.endsWith("storage") || k.startsWith("hugepages-")
                    ? new Quantity(v.toBigInteger().toString())
                    : new Quantity(v.stripTrailingZeros().toPlainString())));
    resources.put("nodes", new Quantity(String.valueOf(claims.size())));
    return resources;
  }

  /** Equal but for transition times, which {@link Conditions#set} keeps while the status holds. */
  private static boolean same(NodePool.Status current, NodePool.Status desired) {
    if (current == null) {
      return false;
    }
    return Objects.equals(current.nodes, desired.nodes)
        && Objects.equals(current.nodeClassObservedGeneration, desired.nodeClassObservedGeneration)
        && sameQuantities(current.resources, desired.resources)
        && current.conditions.size() == desired.conditions.size()
        && desired.conditions.stream()
            .allMatch(
                d -> {
                  Condition c = Conditions.get(current.conditions, d.getType());
                  return c != null
                      && Objects.equals(c.getStatus(), d.getStatus())
                      && Objects.equals(c.getReason(), d.getReason())
                      && Objects.equals(c.getMessage(), d.getMessage());
                });
  }

  private static boolean sameQuantities(Map<String, Quantity> a, Map<String, Quantity> b) {
    if (a == null || b == null) {
      return a == b;
    }
    return a.keySet().equals(b.keySet())
        && a.keySet().stream()
            .allMatch(
                k -> a.get(k).getNumericalAmount().compareTo(b.get(k).getNumericalAmount()) == 0);
  }

  private static Condition copy(Condition c) {
    return new ConditionBuilder(c).build();
  }
}
