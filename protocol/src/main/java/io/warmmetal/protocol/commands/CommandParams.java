package io.warmmetal.protocol.commands;

import io.vertx.core.json.JsonObject;

/** A command's parameters: one record per {@link CommandKind}. */
public sealed interface CommandParams permits PrepareParams, JoinParams, ResetParams, RebootParams {
  /**
   * The parameters as the command frame's {@code params}; those of a kind that takes none are an
   * empty object.
   */
  default JsonObject toJson() {
    return new JsonObject();
  }

  /** The empty parameters of a kind that takes none from the API (all but a join). */
  static CommandParams none(CommandKind kind) {
    return kind.params(new JsonObject());
  }
}
