package io.warmmetal.api.instances;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.warmmetal.api.http.Json;

/** An instance as the API shows it: never its secrets (bootstrap token, user data). */
public final class InstanceJson {
  /** Selects what {@link #from} reads. */
  public static final String SELECT =
      "SELECT i.*, m.address FROM instances i JOIN machines m ON m.id = i.machine_id";

  private InstanceJson() {}

  public static JsonObject from(Row r) {
    return new JsonObject()
        .put("id", r.getString("id"))
        .put("launchId", r.getString("launch_id"))
        .put("machineId", r.getString("machine_id"))
        .put("shape", r.getString("shape"))
        .put("state", r.getString("state"))
        .put("stateReason", r.getString("state_reason"))
        .put("address", r.getString("address"))
        .put("providerId", providerId(r.getString("machine_id")))
        .put("labels", r.getJsonObject("labels"))
        .put("kubernetes", r.getJsonObject("kubernetes"))
        .put("hasUserData", r.getBoolean("has_user_data"))
        .put("createdAt", Json.time(r.getOffsetDateTime("created_at")))
        .put("runningAt", Json.time(r.getOffsetDateTime("running_at")))
        .put("terminatedAt", Json.time(r.getOffsetDateTime("terminated_at")));
  }

  /** The Kubernetes Node's {@code spec.providerID} for an instance on this machine. */
  public static String providerId(String machineId) {
    return "warmmetal://" + machineId;
  }

  /** The join parameters without the bootstrap token, as stored beside the instance. */
  public static JsonObject publicJoin(JsonObject kubernetes) {
    if (kubernetes == null) {
      return null;
    }
    JsonObject copy = kubernetes.copy();
    copy.remove("bootstrapToken");
    return copy;
  }
}
