package io.warmmetal.controller.nodeoverlay;

import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.TypeOverlay;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The NodeOverlays' last evaluation, as planners read it (upstream's {@code InstanceTypeStore}):
 * how each NodePool's instance types are changed. An evaluation replaces the whole at once; a
 * NodePool it did not look at is not planned for until one does.
 */
public final class InstanceTypeStore {
  /** An evaluation, and each NodePool's overlay made of it (once, when first asked for). */
  private record Evaluated(Updates updates, Map<String, TypeOverlay> overlays) {}

  private volatile Evaluated current = new Evaluated(new Updates(), new ConcurrentHashMap<>());

  /** Replaces what the planners read by this evaluation. */
  void update(Updates evaluated) {
    current = new Evaluated(evaluated, new ConcurrentHashMap<>());
  }

  /** Back to nothing evaluated (upstream's {@code Reset}). */
  public void reset() {
    update(new Updates());
  }

  /**
   * How the NodeOverlays change the NodePool's instance types.
   *
   * @throws CloudProviderException.UnevaluatedNodePool the last evaluation did not look at it
   */
  public TypeOverlay overlay(String pool) throws CloudProviderException.UnevaluatedNodePool {
    Evaluated evaluated = current;
    if (!evaluated.updates().evaluated.contains(pool)) {
      throw new CloudProviderException.UnevaluatedNodePool(pool);
    }
    return evaluated.overlays().computeIfAbsent(pool, evaluated.updates()::of);
  }

  /**
   * The NodePool's instance types as its NodeOverlays change them (upstream's {@code ApplyAll}).
   */
  public List<InstanceType> applyAll(String pool, List<InstanceType> types)
      throws CloudProviderException.UnevaluatedNodePool {
    TypeOverlay overlay = overlay(pool);
    return overlay == TypeOverlay.NONE ? types : types.stream().map(overlay::apply).toList();
  }

  /** One instance type of the NodePool as its NodeOverlays change it (upstream's {@code Apply}). */
  public InstanceType apply(String pool, InstanceType type)
      throws CloudProviderException.UnevaluatedNodePool {
    return overlay(pool).apply(type);
  }
}
