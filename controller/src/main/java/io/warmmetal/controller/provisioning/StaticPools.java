package io.warmmetal.controller.provisioning;

import io.fabric8.kubernetes.api.model.Pod;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.NodePoolView;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.state.ClusterState;
import io.warmmetal.controller.state.Definitions;
import io.warmmetal.controller.state.InstanceTypes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Static NodePools ({@code spec.replicas}), as upstream's: the pool keeps that many nodes whatever
 * the pods — each of the cheapest type its requirements allow with a machine to be had, capped by
 * {@code limits.nodes} — and gives up the extras when scaled down (those not up yet first, then the
 * emptiest). Pods land on them as on any node; no pod makes a static pool launch, and consolidation
 * leaves it alone (drift and expiry do not).
 */
public final class StaticPools {
  private static final Logger LOG = LoggerFactory.getLogger(StaticPools.class);

  private final NodeClaimWriter writer;
  private final Definitions defs;
  private final Scheduler scheduler;
  private final Provisioner provisioner;

  public StaticPools(
      NodeClaimWriter writer, Definitions defs, Scheduler scheduler, Provisioner provisioner) {
    this.writer = writer;
    this.defs = defs;
    this.scheduler = scheduler;
    this.provisioner = provisioner;
  }

  public void reconcile(List<NodeClaim> claims, List<Pod> pods) throws Exception {
    List<NodePool> pools = defs.pools().stream().filter(NodePool::isStatic).toList();
    if (pools.isEmpty()) {
      return;
    }
    ClusterState state = null;
    for (NodePool pool : pools) {
      String name = pool.getMetadata().getName();
      List<NodeClaim> own =
          claims.stream()
              .filter(
                  c ->
                      c.getMetadata().getDeletionTimestamp() == null
                          && name.equals(c.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL)))
              .toList();
      long wanted = pool.getSpec().replicas;
      if (pool.getSpec().limits != null && pool.getSpec().limits.containsKey(InstanceTypes.NODES)) {
        wanted =
            Math.min(
                wanted,
                pool.getSpec().limits.get(InstanceTypes.NODES).getNumericalAmount().longValue());
      }
      if (own.size() > wanted) {
        scaleDown(own, (int) (own.size() - wanted), pods);
      } else if (own.size() < wanted) {
        state = state == null ? provisioner.state(claims, pods) : state;
        scaleUp(state, name, (int) (wanted - own.size()));
      }
    }
  }

  private void scaleUp(ClusterState state, String pool, int count) throws Exception {
    NodePoolView view = state.view(pool);
    InstanceType cheapest =
        view == null
            ? null
            : provisioner.launchable(state, pool).stream()
                .filter(view::allows)
                .min(Comparator.comparingDouble(InstanceType::price))
                .orElse(null);
    if (cheapest == null) {
      LOG.info("Static NodePool {}: no instance type it allows has a machine to be had now", pool);
      return;
    }
    List<Scheduler.PlannedNode> nodes = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      nodes.add(
          new Scheduler.PlannedNode(view, cheapest, List.of(), scheduler.usable(view, cheapest)));
    }
    LOG.info("Static NodePool {}: {} more node(s) of {}", pool, count, cheapest.name());
    provisioner.replacements(state, nodes, "provisioned");
  }

  /**
   * Deletes {@code count} of the pool's claims: those not initialized first, then those with the
   * fewest pods.
   */
  private void scaleDown(List<NodeClaim> own, int count, List<Pod> pods) {
    Map<String, Integer> podsOn = new HashMap<>();
    pods.forEach(
        p -> {
          if (p.getSpec() != null && p.getSpec().getNodeName() != null) {
            podsOn.merge(p.getSpec().getNodeName(), 1, Integer::sum);
          }
        });
    List<NodeClaim> order = new ArrayList<>(own);
    order.sort(
        Comparator.comparing(
                (NodeClaim c) ->
                    c.getStatus() != null
                        && Conditions.isTrue(c.getStatus().conditions, Conditions.INITIALIZED))
            .thenComparing(
                c ->
                    c.getStatus() == null || c.getStatus().nodeName == null
                        ? 0
                        : podsOn.getOrDefault(c.getStatus().nodeName, 0)));
    for (NodeClaim claim : order.subList(0, count)) {
      LOG.info("Static NodePool: scaling down, NodeClaim {} goes", claim.getMetadata().getName());
      writer.delete(claim);
      claim
          .getMetadata()
          .setDeletionTimestamp(Instant.now().toString()); // gone for this pass's plans
    }
  }
}
