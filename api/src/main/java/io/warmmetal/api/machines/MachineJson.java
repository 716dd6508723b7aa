package io.warmmetal.api.machines;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.http.Json;
import io.warmmetal.api.lifecycle.Host;
import io.warmmetal.api.lifecycle.Machine;

/** A machine as the API shows it. */
public final class MachineJson {
  private MachineJson() {}

  public static JsonObject from(Machine m) {
    JsonObject identity = new JsonObject();
    if (m.systemUuid() != null) {
      identity.put("systemUuid", m.systemUuid());
    }
    if (m.primaryMac() != null) {
      identity.put("primaryMac", m.primaryMac());
    }
    return new JsonObject()
        .put("id", m.id())
        .put("name", m.name())
        .put("state", m.state().wire())
        .put("shape", m.shape())
        .put("address", m.address())
        .put("facts", m.facts())
        .put("labels", m.labels())
        .put("identity", identity)
        .put("cordoned", m.cordoned())
        .put("admitted", m.admitted())
        .put("instanceId", m.instanceId())
        .put("createdAt", Json.time(m.createdAt()))
        .put("stateChangedAt", Json.time(m.stateChangedAt()));
  }

  /** What a registration body or an enrolling agent says about its server. */
  public static Host host(JsonObject body) {
    JsonObject identity = body.getJsonObject("identity", new JsonObject());
    return new Host(
        body.getString("name"),
        body.getString("address"),
        body.getJsonObject("facts"),
        identity.getString("systemUuid"),
        identity.getString("primaryMac"));
  }
}
