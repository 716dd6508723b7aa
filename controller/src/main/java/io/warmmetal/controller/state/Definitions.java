package io.warmmetal.controller.state;

import io.fabric8.kubernetes.client.informers.cache.Store;
import io.warmmetal.controller.karpenter.NodeClaimTemplate;
import io.warmmetal.controller.karpenter.NodeClassReference;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.NodePoolValidation;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The NodePools and node classes as the controller's informers last saw them. They change rarely
 * and a pass may use a version a moment old, so they are read from the cache, not asked of the API
 * server on every pass (NodeClaims, which a pass creates and must not plan twice, are always listed
 * fresh). Only valid NodePools take part in provisioning and disruption ({@link
 * NodePoolValidation}; each version judged once): one bad NodePool leaves the others working.
 */
public final class Definitions {
  private final Store<NodePool> pools;
  private final Store<WarmMetalNodeClass> nodeClasses;
  private final Map<String, Judged> judgements = new ConcurrentHashMap<>();

  public Definitions(Store<NodePool> pools, Store<WarmMetalNodeClass> nodeClasses) {
    this.pools = pools;
    this.nodeClasses = nodeClasses;
  }

  /** The valid NodePools of ours. */
  public List<NodePool> pools() {
    return pools.list().stream().filter(p -> managed(p) && problems(p).isEmpty()).toList();
  }

  /** Every NodePool of ours, valid or not: for status. */
  public List<NodePool> managedPools() {
    return pools.list().stream().filter(Definitions::managed).toList();
  }

  /** The NodePool of that name if it is ours and valid. */
  public NodePool pool(String name) {
    NodePool pool = name == null ? null : pools.getByKey(name);
    return pool != null && managed(pool) && problems(pool).isEmpty() ? pool : null;
  }

  /**
   * Whether the NodePool is this controller's: its nodeClassRef is in WarmMetal's group (or names
   * our kind without a group). Others belong to another provider running beside us (Karpenter
   * itself, say) and are left alone, as upstream's providers leave each other's.
   */
  public static boolean managed(NodePool pool) {
    NodeClassReference ref =
        pool.getSpec() == null
                || pool.getSpec().template == null
                || pool.getSpec().template.spec == null
            ? null
            : pool.getSpec().template.spec.nodeClassRef;
    return ref != null
        && (WarmMetalNodeClass.GROUP.equals(ref.group)
            || (ref.group == null || ref.group.isEmpty())
                && WarmMetalNodeClass.KIND.equals(ref.kind));
  }

  /** What makes the NodePool invalid; empty when nothing does. */
  public List<String> problems(NodePool pool) {
    String version = pool.getMetadata().getUid() + "/" + pool.getMetadata().getResourceVersion();
    Judged judged = judgements.get(pool.getMetadata().getName());
    if (judged == null || !judged.version().equals(version)) {
      judged = new Judged(version, List.copyOf(NodePoolValidation.problems(pool)));
      judgements.put(pool.getMetadata().getName(), judged);
    }
    return judged.problems();
  }

  private record Judged(String version, List<String> problems) {}

  /**
   * The node class the NodePool's template names.
   *
   * @throws IllegalStateException it names none of ours that exists
   */
  public WarmMetalNodeClass nodeClassOf(NodePool pool) {
    WarmMetalNodeClass nodeClass = nodeClass(pool.getSpec().template.spec);
    if (nodeClass == null) {
      throw new IllegalStateException(
          "resolving node class, WarmMetalNodeClass "
              + pool.getSpec().template.spec.nodeClassRef.name
              + " not found");
    }
    return nodeClass;
  }

  /** The node class a {@code nodeClassRef} names, if it is ours and exists. */
  public WarmMetalNodeClass nodeClass(NodeClaimTemplate.Spec spec) {
    if (spec.nodeClassRef == null || !WarmMetalNodeClass.KIND.equals(spec.nodeClassRef.kind)) {
      return null;
    }
    return nodeClasses.getByKey(spec.nodeClassRef.name);
  }
}
