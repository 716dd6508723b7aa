package io.warmmetal.protocol.channel;

import io.vertx.core.json.JsonObject;

/** Agent → API, every heartbeat interval: the agent is alive. */
public record Heartbeat() implements Frame {
  @Override
  public JsonObject fields() {
    return new JsonObject();
  }
}
