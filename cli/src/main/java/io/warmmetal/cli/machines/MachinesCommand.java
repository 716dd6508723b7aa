package io.warmmetal.cli.machines;

import io.warmmetal.cli.output.Cells;
import io.warmmetal.cli.output.Column;
import io.warmmetal.cli.session.GroupCommand;
import io.warmmetal.cli.session.SessionCommand;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code warmmetal machines …}: the fleet's servers. */
@Command(name = "machines", description = "List and manage the fleet's machines.",
    subcommands = {MachinesCommand.Ls.class, MachinesCommand.Get.class, MachineActions.Cordon.class,
        MachineActions.Uncordon.class, MachineActions.Retire.class, PowerCommand.class, RecoverCommand.class})
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
        Column.wide("ADDRESS", m -> Cells.text(m.get("address"))),
        Column.wide("LABELS", m -> Cells.pairs(m.get("labels"))));
  }

  @Command(name = "ls", aliases = "list", description = "List machines.")
  static final class Ls extends SessionCommand {
    @Option(names = "--state", description = "only machines in this state")
    String state;

    @Option(names = "--shape", description = "only machines of this shape")
    String shape;

    @Option(names = "--cordoned", arity = "0..1", description = "only cordoned (or, =false, uncordoned) machines")
    Boolean cordoned;

    @Option(names = {"-l", "--selector"}, description = "label selector, e.g. rack=r1,!spot")
    String selector;

    @Override
    public Integer call() {
      Map<String, Object> q = new LinkedHashMap<>();
      q.put("state", state);
      q.put("shape", shape);
      q.put("cordoned", cordoned);
      q.put("labelSelector", selector);
      session().printer().print(api().list("/v1/machines", q), columns(session().clock().instant()));
      return 0;
    }
  }

  @Command(name = "get", description = "Show one machine.")
  static final class Get extends SessionCommand {
    @Parameters(index = "0", paramLabel = "MACHINE")
    String id;

    @Override
    public Integer call() {
      session().printer().print(api().get("/v1/machines/" + id), columns(session().clock().instant()));
      return 0;
    }
  }
}
