package io.warmmetal.protocol.channel;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.Fields;
import io.warmmetal.protocol.MalformedFrame;

/** One frame of the {@link Channel}: a record per {@link FrameType}, written and read here only. */
public sealed interface Frame permits Hello, Heartbeat, Progress, Result, Welcome, Command, Ack {
  /** The frame's {@code type} on the wire. */
  default String type() {
    return FrameType.of(this).wire();
  }

  /** The frame's fields, without its type. */
  JsonObject fields();

  default JsonObject toJson() {
    return new JsonObject().put("type", type()).mergeIn(fields());
  }

  default String encode() {
    return toJson().encode();
  }

  /**
   * Reads a frame; a frame that is not JSON, of no known type or with a wrong field is a {@link
   * MalformedFrame}.
   */
  static Frame parse(String text) {
    JsonObject json;
    try {
      json = new JsonObject(text);
    } catch (DecodeException | ClassCastException e) {
      throw new MalformedFrame("malformed frame");
    }
    return parse(json);
  }

  static Frame parse(JsonObject json) {
    return FrameType.fromWire(Fields.optionalString(json, "type")).read(json);
  }
}
