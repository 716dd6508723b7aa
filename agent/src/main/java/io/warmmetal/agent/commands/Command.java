package io.warmmetal.agent.commands;

import io.vertx.core.json.JsonObject;

/** A command from the API: {@code kind} is prepare, join, reset or reboot; a join's params hold its secrets. */
public record Command(String id, long seq, String kind, String instanceId, JsonObject params) {
  public static Command of(JsonObject frame) {
    return new Command(frame.getString("id"), frame.getLong("seq"), frame.getString("kind"),
        frame.getString("instanceId"), frame.getJsonObject("params", new JsonObject()));
  }

  @Override
  public String toString() {
    return "Command[" + kind + " " + id + " #" + seq + "]"; // never the params: they may hold secrets
  }
}
