package io.warmmetal.api.lifecycle;

import io.vertx.core.json.JsonObject;

/** The launch as the API returns it, and whether it is the replay of an earlier launch with the same token. */
public record LaunchResult(JsonObject launch, boolean replayed) {}
