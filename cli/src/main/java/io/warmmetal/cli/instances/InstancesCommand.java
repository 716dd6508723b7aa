package io.warmmetal.cli.instances;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
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

/** {@code warmmetal instances launch|ls|get|terminate}. */
@Command(
    name = "instances",
    description = "Launch, list and terminate instances.",
    subcommands = {
      LaunchCommand.class,
      InstancesCommand.Ls.class,
      InstancesCommand.Get.class,
      InstancesCommand.Terminate.class
    })
public final class InstancesCommand extends GroupCommand {
  static List<Column> columns(Instant now) {
    return List.of(
        Column.field("ID", "id"),
        Column.field("STATE", "state"),
        Column.field("SHAPE", "shape"),
        Column.field("MACHINE", "machineId"),
        Column.field("ADDRESS", "address"),
        Column.of("AGE", i -> Cells.age(i.get("createdAt"), now)),
        Column.wide("PROJECT", i -> Cells.text(i.get("project"))),
        Column.wide("LABELS", i -> Cells.pairs(i.get("labels"))),
        Column.wide("REASON", i -> Cells.text(i.get("stateReason"))));
  }

  @Command(name = "ls", aliases = "list", description = "List instances.")
  static final class Ls extends SessionCommand {
    @Mixin Filters filters;

    @Option(
        names = "--machine",
        paramLabel = "MACHINE",
        description = "only the instance on this machine")
    String machine;

    @Option(
        names = "--standby",
        description = "only standby instances (those that pre-join machines)")
    boolean standby;

    @Override
    public Integer call() {
      Map<String, Object> q = filters.query();
      q.put("machineId", machine);
      q.put("standby", standby ? true : null);
      return print(api().list("/v1/instances", q), columns(session().clock().instant()));
    }
  }

  @Command(name = "get", description = "Show one instance.")
  static final class Get extends SessionCommand {
    @Parameters(index = "0", paramLabel = "INSTANCE")
    String id;

    @Override
    public Integer call() {
      return print(api().get("/v1/instances/" + id), columns(session().clock().instant()));
    }
  }

  @Command(
      name = "terminate",
      description = "Terminate instances (idempotent); their machines reset and return.")
  static final class Terminate extends SessionCommand {
    @Parameters(paramLabel = "INSTANCE", arity = "1..*")
    List<String> ids;

    @Override
    public Integer call() {
      var done = JsonNodeFactory.instance.arrayNode();
      for (String id : ids) {
        done.add(api().delete("/v1/instances/" + id));
      }
      return print(done, columns(session().clock().instant()));
    }
  }
}
