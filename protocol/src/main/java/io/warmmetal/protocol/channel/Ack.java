package io.warmmetal.protocol.channel;

import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.Fields;

/** API → agent: the command's result is recorded; the agent may forget it. */
public record Ack(String commandId) implements Frame {
  static Ack fromJson(JsonObject json) {
    return new Ack(Fields.string(json, "commandId"));
  }

  @Override
  public JsonObject fields() {
    return new JsonObject().put("commandId", commandId);
  }
}
