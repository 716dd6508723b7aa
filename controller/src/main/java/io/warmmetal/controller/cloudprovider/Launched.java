package io.warmmetal.controller.cloudprovider;

/**
 * What a NodeClaim's launch got: its instance, and what the claim records of it (as upstream's
 * {@code Create} hydrates the NodeClaim it returns).
 *
 * @param zone the machine's zone, or null (not read, or the machine has none)
 * @param region the machine's region, or null
 * @param imageId the node image the machine booted, or null when it could not be read
 */
public record Launched(Instance instance, String zone, String region, String imageId) {}
