package io.warmmetal.cli.machines;

import io.warmmetal.cli.output.Cells;
import io.warmmetal.cli.output.Column;
import io.warmmetal.cli.session.SessionCommand;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code warmmetal machines power M [on|off]}: show the power state, or switch it. */
@Command(name = "power", description = "Show a machine's power state, or switch it on or off.")
final class PowerCommand extends SessionCommand {
  enum Switch {
    on,
    off
  }

  static final List<Column> COLUMNS =
      List.of(
          Column.field("MACHINE", "machineId"),
          Column.field("DRIVER", "driver"),
          Column.field("POWER", "powerState"),
          Column.field("CHANGED", "powerChangedAt"),
          Column.of(
              "OBSERVED",
              p ->
                  p.has("observeError")
                      ? "error: " + p.get("observeError").asText()
                      : Cells.text(p.get("observed"))),
          Column.wide("ADDRESS", p -> Cells.text(p.get("address"))));

  @Parameters(index = "0", paramLabel = "MACHINE")
  String id;

  @Parameters(
      index = "1",
      arity = "0..1",
      paramLabel = "on|off",
      description = "switch the machine on or off now")
  Switch to;

  @Option(names = "--observe", description = "also ask the BMC now (needs an admin token)")
  boolean observe;

  @Override
  public Integer call() {
    var power =
        to == null
            ? api().get("/v1/machines/" + id + "/power" + (observe ? "?observe=true" : ""))
            : ResetPending.explained(
                api(), id, () -> api().post("/v1/machines/" + id + "/power-" + to, null));
    return print(power, COLUMNS);
  }
}
