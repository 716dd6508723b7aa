package io.warmmetal.protocol.channel;

import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.Fields;

/** Agent → API, first: the highest command seq the agent has taken (0: none yet). */
public record Hello(long lastSeq) implements Frame {
  static Hello fromJson(JsonObject json) {
    return new Hello(Fields.number(json, "lastSeq", 0));
  }

  @Override
  public JsonObject fields() {
    return new JsonObject().put("lastSeq", lastSeq);
  }
}
