package io.warmmetal.api.machines;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.warmmetal.api.http.Json;

/** A {@code machines} row as the API shows it. */
public final class MachineJson {
  private MachineJson() {}

  public static JsonObject from(Row r) {
    JsonObject identity = new JsonObject();
    if (r.getString("system_uuid") != null) {
      identity.put("systemUuid", r.getString("system_uuid"));
    }
    if (r.getString("primary_mac") != null) {
      identity.put("primaryMac", r.getString("primary_mac"));
    }
    return new JsonObject()
        .put("id", r.getString("id"))
        .put("name", r.getString("name"))
        .put("state", r.getString("state"))
        .put("shape", r.getString("shape"))
        .put("address", r.getString("address"))
        .put("facts", r.getJsonObject("facts"))
        .put("labels", r.getJsonObject("labels"))
        .put("identity", identity)
        .put("cordoned", r.getBoolean("cordoned"))
        .put("instanceId", r.getString("instance_id"))
        .put("createdAt", Json.time(r.getOffsetDateTime("created_at")))
        .put("stateChangedAt", Json.time(r.getOffsetDateTime("state_changed_at")));
  }
}
