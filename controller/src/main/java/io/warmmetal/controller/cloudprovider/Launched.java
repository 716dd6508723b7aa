package io.warmmetal.controller.cloudprovider;

import io.fabric8.kubernetes.api.model.Quantity;
import java.util.Map;

/**
 * What a NodeClaim's launch got: its instance, and what the claim records of it (as upstream's
 * {@code Create} hydrates the NodeClaim it returns).
 *
 * @param zone the machine's zone, or null (not read, or the machine has none)
 * @param region the machine's region, or null
 * @param imageId the node image the machine booted, or null when it could not be read
 * @param capacity what the machine has, as its Node should report it (the claim's {@code
 *     status.capacity}, which the consistency check holds the Node to); empty when not known
 */
public record Launched(
    Instance instance, String zone, String region, String imageId, Map<String, Quantity> capacity) {
  public Launched(Instance instance, String zone, String region, String imageId) {
    this(instance, zone, region, imageId, Map.of());
  }
}
