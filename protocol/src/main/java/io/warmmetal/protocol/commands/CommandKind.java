package io.warmmetal.protocol.commands;

import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.WireName;
import java.util.function.Function;

/**
 * What a command asks of the host; each kind has its parameters' record and, on the host, a script
 * of its name.
 */
public enum CommandKind implements WireName {
  PREPARE(PrepareParams.class, json -> new PrepareParams()),
  JOIN(JoinParams.class, JoinParams::fromJson),
  RESET(ResetParams.class, json -> new ResetParams()),
  REBOOT(RebootParams.class, json -> new RebootParams());

  private final Class<? extends CommandParams> paramsType;
  private final Function<JsonObject, CommandParams> params;

  CommandKind(
      Class<? extends CommandParams> paramsType, Function<JsonObject, CommandParams> params) {
    this.paramsType = paramsType;
    this.params = params;
  }

  /** This kind's parameters, read from a command frame's {@code params}. */
  public CommandParams params(JsonObject json) {
    return params.apply(json);
  }

  /** The record this kind's parameters are. */
  public Class<? extends CommandParams> paramsType() {
    return paramsType;
  }

  public static CommandKind fromWire(String wire) {
    return WireName.parse(CommandKind.class, wire, "command kind");
  }

  /** The wire name, which is also the database's and the host script's. */
  @Override
  public String toString() {
    return wire();
  }
}
