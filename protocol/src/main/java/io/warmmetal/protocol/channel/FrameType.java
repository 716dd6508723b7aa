package io.warmmetal.protocol.channel;

import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.WireName;
import java.util.function.Function;

/** The {@code type} of a {@link Frame} on the wire, and the record that reads it. */
public enum FrameType implements WireName {
  HELLO(Hello.class, Hello::fromJson),
  HEARTBEAT(Heartbeat.class, json -> new Heartbeat()),
  PROGRESS(Progress.class, Progress::fromJson),
  RESULT(Result.class, Result::fromJson),
  WELCOME(Welcome.class, Welcome::fromJson),
  COMMAND(Command.class, Command::fromJson),
  ACK(Ack.class, Ack::fromJson);

  private final Class<? extends Frame> record;
  private final Function<JsonObject, Frame> reader;

  FrameType(Class<? extends Frame> record, Function<JsonObject, Frame> reader) {
    this.record = record;
    this.reader = reader;
  }

  Frame read(JsonObject json) {
    return reader.apply(json);
  }

  static FrameType of(Frame frame) {
    for (FrameType type : values()) {
      if (type.record.isInstance(frame)) {
        return type;
      }
    }
    throw new IllegalStateException(
        "no type for " + frame.getClass()); // every Frame record is listed above
  }

  static FrameType fromWire(String wire) {
    return WireName.parse(FrameType.class, wire, "frame type");
  }
}
