package io.warmmetal.protocol.channel;

import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.Fields;
import io.warmmetal.protocol.MalformedFrame;

/** Agent → API: a command's step has started; the message may be null. */
public record Progress(String commandId, String step, String message) implements Frame {
  public Progress {
    if (commandId == null || step == null) {
      throw new MalformedFrame("progress has a commandId and a step");
    }
  }

  static Progress fromJson(JsonObject json) {
    return new Progress(
        Fields.string(json, "commandId"),
        Fields.string(json, "step"),
        Fields.optionalString(json, "message"));
  }

  @Override
  public JsonObject fields() {
    return new JsonObject().put("commandId", commandId).put("step", step).put("message", message);
  }
}
