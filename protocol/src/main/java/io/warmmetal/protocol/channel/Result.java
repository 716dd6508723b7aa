package io.warmmetal.protocol.channel;

import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.Fields;
import io.warmmetal.protocol.MalformedFrame;
import io.warmmetal.protocol.WireName;

/** Agent → API: how a command ended; sent again until an {@link Ack} says it is recorded. */
public record Result(String commandId, Status status, String message) implements Frame {
  public enum Status implements WireName {
    SUCCEEDED,
    FAILED;

    @Override
    public String toString() {
      return wire();
    }
  }

  public Result {
    if (commandId == null || status == null) {
      throw new MalformedFrame("a result has a commandId and a status of succeeded or failed");
    }
  }

  public static Result succeeded(String commandId, String message) {
    return new Result(commandId, Status.SUCCEEDED, message);
  }

  public static Result failed(String commandId, String message) {
    return new Result(commandId, Status.FAILED, message);
  }

  public boolean succeeded() {
    return status == Status.SUCCEEDED;
  }

  static Result fromJson(JsonObject json) {
    return new Result(
        Fields.string(json, "commandId"),
        WireName.parse(
            Status.class,
            Fields.optionalString(json, "status"),
            "result status (succeeded or failed)"),
        Fields.optionalString(json, "message"));
  }

  @Override
  public JsonObject fields() {
    return new JsonObject()
        .put("commandId", commandId)
        .put("status", status.wire())
        .put("message", message);
  }
}
