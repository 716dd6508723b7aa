package io.warmmetal.cli.machines;

import io.warmmetal.cli.output.Cells;
import io.warmmetal.cli.output.Column;
import io.warmmetal.cli.session.Filters;
import io.warmmetal.cli.session.GroupCommand;
import io.warmmetal.cli.session.SessionCommand;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code warmmetal machines …}: the fleet's servers. */
@Command(
    name = "machines",
    description = "List and manage the fleet's machines.",
    subcommands = {
      MachinesCommand.Ls.class,
      MachinesCommand.Get.class,
      MachineActions.Cordon.class,
      MachineActions.Uncordon.class,
      MachineActions.Retire.class,
      MachineActions.Reboot.class,
      MachineActions.Accept.class,
      MachineActions.Reject.class,
      PowerCommand.class,
      RecoverCommand.class,
      MachineCommands.Ls.class,
      MachineCommands.Report.class
    })
public final class MachinesCommand extends GroupCommand {
  static List<Column> columns(Instant now) {
    return List.of(
        Column.field("ID", "id"),
        Column.field("NAME", "name"),
        Column.field("STATE", "state"),
        Column.field("SHAPE", "shape"),
        Column.field("CORDONED", "cordoned"),
        Column.field("INSTANCE", "instanceId"),
        Column.of("AGE", m -> Cells.age(m.get("stateChangedAt"), now)),
        Column.wide("ADMITTED", m -> Cells.text(m.get("admitted"))),
        Column.wide("ADDRESS", m -> Cells.text(m.get("address"))),
        Column.wide("LABELS", m -> Cells.pairs(m.get("labels"))));
  }

  @Command(name = "ls", aliases = "list", description = "List machines.")
  static final class Ls extends SessionCommand {
    @Mixin Filters filters;

    @Option(
        names = "--cordoned",
        arity = "0..1",
        description = "only cordoned (or, =false, uncordoned) machines")
    Boolean cordoned;

    @Override
    public Integer call() {
      Map<String, Object> q = filters.query();
      q.put("cordoned", cordoned);
      return print(api().list("/v1/machines", q), columns(session().clock().instant()));
    }
  }

  @Command(name = "get", description = "Show one machine.")
  static final class Get extends SessionCommand {
    @Parameters(index = "0", paramLabel = "MACHINE")
    String id;

    @Override
    public Integer call() {
      return print(api().get("/v1/machines/" + id), columns(session().clock().instant()));
    }
  }
}
