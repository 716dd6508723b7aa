package io.warmmetal.controller.provisioning;

import io.fabric8.kubernetes.client.informers.cache.Store;
import io.warmmetal.controller.karpenter.NodeClaimTemplate;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.util.List;

/**
 * The NodePools and node classes as the controller's informers last saw them. They change rarely and a pass may use
 * a version a moment old, so they are read from the cache, not asked of the API server on every pass (NodeClaims,
 * which a pass creates and must not plan twice, are always listed fresh).
 */
public final class Definitions {
  private final Store<NodePool> pools;
  private final Store<WarmMetalNodeClass> nodeClasses;

  public Definitions(Store<NodePool> pools, Store<WarmMetalNodeClass> nodeClasses) {
    this.pools = pools;
    this.nodeClasses = nodeClasses;
  }

  public List<NodePool> pools() {
    return pools.list();
  }

  public NodePool pool(String name) {
    return name == null ? null : pools.getByKey(name);
  }

  /** The node class a {@code nodeClassRef} names, if it is ours and exists. */
  public WarmMetalNodeClass nodeClass(NodeClaimTemplate.Spec spec) {
    if (spec.nodeClassRef == null || !"WarmMetalNodeClass".equals(spec.nodeClassRef.kind)) {
      return null;
    }
    return nodeClasses.getByKey(spec.nodeClassRef.name);
  }
}
