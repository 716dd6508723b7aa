package io.warmmetal.api.lifecycle;

import java.util.List;

/**
 * A launch's instances, and whether this answer replays an earlier launch with the same client
 * token.
 */
public record Launch(
    String launchId, String clientToken, List<Instance> instances, boolean replayed) {}
