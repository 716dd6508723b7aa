package io.warmmetal.api.lifecycle;

import io.vertx.core.json.JsonObject;

/**
 * What a server says about itself: a name, an address, its facts (CPUs, memory, GPUs, architecture:
 * the shape is named from them) and its hardware identity, by which the same server is recognised
 * when it enrolls again.
 */
public record Host(
    String name, String address, JsonObject facts, String systemUuid, String primaryMac) {}
