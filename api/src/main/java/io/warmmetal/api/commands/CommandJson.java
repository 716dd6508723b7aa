package io.warmmetal.api.commands;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.http.Json;
import io.warmmetal.api.lifecycle.Command;

/** A command as the API shows it. */
public final class CommandJson {
  private CommandJson() {}

  public static JsonObject from(Command c) {
    return new JsonObject()
        .put("id", c.id())
        .put("machineId", c.machineId())
        .put("instanceId", c.instanceId())
        .put("type", c.type())
        .put("status", c.status())
        .put("message", c.message())
        .put("createdAt", Json.time(c.createdAt()))
        .put("finishedAt", Json.time(c.finishedAt()));
  }
}
