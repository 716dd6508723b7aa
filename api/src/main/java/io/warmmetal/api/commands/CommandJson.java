package io.warmmetal.api.commands;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.warmmetal.api.http.Json;

/** A command as the API shows it. Commands carry no secrets: a join's parameters stay sealed on its instance. */
public final class CommandJson {
  private CommandJson() {}

  public static JsonObject from(Row r) {
    return new JsonObject()
        .put("id", r.getString("id"))
        .put("machineId", r.getString("machine_id"))
        .put("instanceId", r.getString("instance_id"))
        .put("type", r.getString("type"))
        .put("status", r.getString("status"))
        .put("message", r.getString("message"))
        .put("createdAt", Json.time(r.getOffsetDateTime("created_at")))
        .put("finishedAt", Json.time(r.getOffsetDateTime("finished_at")));
  }
}
