package io.warmmetal.controller.cloudprovider;

import io.warmmetal.controller.scheduling.InstanceType;
import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * A node class's instance types as its fleet offered them when last read.
 *
 * @param types every shape of the fleet, as an instance type (offerings with their counts)
 * @param available the names of those a launch can have a machine of now
 * @param readAt when the fleet was asked
 */
public record Catalog(List<InstanceType> types, Set<String> available, Instant readAt) {
  public Catalog {
    types = List.copyOf(types);
    available = Set.copyOf(available);
  }
}
