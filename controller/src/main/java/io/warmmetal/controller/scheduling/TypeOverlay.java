package io.warmmetal.controller.scheduling;

/**
 * How a NodePool's NodeOverlays change the instance types its nodes may be of: their offerings'
 * prices and their extended resources (upstream's {@code InstanceTypeStore.Apply} for one
 * NodePool). Overlays are per NodePool, so the scheduler applies each pool's own to the types it is
 * given.
 */
@FunctionalInterface
public interface TypeOverlay {
  /** No NodeOverlay: the types as the fleet offers them. */
  TypeOverlay NONE = type -> type;

  InstanceType apply(InstanceType type);
}
