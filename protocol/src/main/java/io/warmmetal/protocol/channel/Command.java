package io.warmmetal.protocol.channel;

import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.Fields;
import io.warmmetal.protocol.MalformedFrame;
import io.warmmetal.protocol.commands.CommandKind;
import io.warmmetal.protocol.commands.CommandParams;

/**
 * API → agent: a command to run, in seq order, at most once per id; {@code instanceId} is null for
 * a machine's own commands (a prepare); {@code params} is the record of its kind (a join's holds
 * secrets).
 */
public record Command(
    String id, long seq, CommandKind kind, String instanceId, CommandParams params)
    implements Frame {
  public Command {
    if (id == null || kind == null || params == null) {
      throw new MalformedFrame("a command has an id, a kind and its parameters");
    }
    if (!kind.paramsType().isInstance(params)) {
      throw new MalformedFrame(
          "a " + kind + " command cannot take " + params.getClass().getSimpleName());
    }
  }

  static Command fromJson(JsonObject json) {
    CommandKind kind = CommandKind.fromWire(Fields.string(json, "kind"));
    return new Command(
        Fields.string(json, "id"),
        Fields.number(json, "seq"),
        kind,
        Fields.optionalString(json, "instanceId"),
        kind.params(Fields.object(json, "params")));
  }

  @Override
  public JsonObject fields() {
    return new JsonObject()
        .put("id", id)
        .put("seq", seq)
        .put("kind", kind.wire())
        .put("instanceId", instanceId)
        .put("params", params.toJson());
  }

  @Override
  public String toString() {
    return "Command["
        + kind
        + " "
        + id
        + " #"
        + seq
        + "]"; // never the params: they may hold secrets
  }
}
