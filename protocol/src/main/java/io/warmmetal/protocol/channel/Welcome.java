package io.warmmetal.protocol.channel;

import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.Fields;

/** API → agent, after hello: the machine the certificate stands for, and how often to beat. */
public record Welcome(String machineId, long heartbeatSeconds) implements Frame {
  static Welcome fromJson(JsonObject json) {
    return new Welcome(Fields.string(json, "machineId"), Fields.number(json, "heartbeatSeconds"));
  }

  @Override
  public JsonObject fields() {
    return new JsonObject().put("machineId", machineId).put("heartbeatSeconds", heartbeatSeconds);
  }
}
