package io.warmmetal.api.lifecycle;

import io.vertx.core.json.JsonObject;

/**
 * A machine registered by an operator: the host, its labels, and whether it is already prepared
 * (then warm).
 */
public record Registration(Host host, JsonObject labels, boolean prepared) {}
