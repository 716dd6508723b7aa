package io.warmmetal.api.instances;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.warmmetal.api.http.Json;
import io.warmmetal.api.lifecycle.Instance;
import io.warmmetal.api.lifecycle.Launch;

/**
 * Instances and launches as the API shows them: never their secrets (bootstrap token, user data).
 */
public final class InstanceJson {
  private InstanceJson() {}

  public static JsonObject from(Instance i) {
    return new JsonObject()
        .put("id", i.id())
        .put("launchId", i.launchId())
        .put("project", i.project())
        .put("machineId", i.machineId())
        .put("shape", i.shape())
        .put("state", i.state().wire())
        .put("stateReason", i.stateReason())
        .put("address", i.address())
        .put("providerId", i.providerId())
        .put("labels", i.labels())
        .put("kubernetes", i.kubernetes())
        .put("hasUserData", i.hasUserData())
        .put("standby", i.standby())
        .put("preJoined", i.preJoined())
        .put("createdAt", Json.time(i.createdAt()))
        .put("runningAt", Json.time(i.runningAt()))
        .put("terminatedAt", Json.time(i.terminatedAt()));
  }

  public static JsonObject from(Launch launch) {
    JsonArray instances = new JsonArray();
    launch.instances().forEach(i -> instances.add(from(i)));
    return new JsonObject()
        .put("launchId", launch.launchId())
        .put("clientToken", launch.clientToken())
        .put("instances", instances);
  }
}
