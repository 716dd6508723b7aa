package io.warmmetal.controller.cloudprovider;

import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.TypeOverlay;
import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * A node class's instance types as its fleet offered them when last read.
 *
 * @param types every shape of the fleet, as an instance type (offerings with their counts)
 * @param available the names of those a launch can have a machine of now
 * @param readAt when the fleet was asked
 * @param overlay how the NodePool asked for them changes them (its NodeOverlays; {@link
 *     TypeOverlay#NONE} for a node class's catalog): {@code types} are as the fleet offers them, so
 *     the same overlay applies to any copy of them a plan makes
 */
public record Catalog(
    List<InstanceType> types, Set<String> available, Instant readAt, TypeOverlay overlay) {
  public Catalog {
    types = List.copyOf(types);
    available = Set.copyOf(available);
  }

  public Catalog(List<InstanceType> types, Set<String> available, Instant readAt) {
    this(types, available, readAt, TypeOverlay.NONE);
  }

  /** These types as a NodePool's NodeOverlays change them. */
  public Catalog overlaid(TypeOverlay by) {
    return new Catalog(types, available, readAt, by);
  }
}
