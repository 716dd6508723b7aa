package io.warmmetal.cli.hardware;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warmmetal.cli.output.Cells;
import io.warmmetal.cli.output.Column;
import io.warmmetal.cli.session.GroupCommand;
import io.warmmetal.cli.session.SessionCommand;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code warmmetal hardware ls|get|add|delete}: servers the operator expects to network-boot. One
 * whose MAC (and system UUID, if the record has one) matches a record is admitted when it enrolls;
 * anything else waits as new hardware for {@code machines accept}.
 */
@Command(
    name = "hardware",
    description = "Register the servers you expect to network-boot (admitted on enrollment).",
    subcommands = {
      HardwareCommand.Ls.class,
      HardwareCommand.Get.class,
      HardwareCommand.Add.class,
      HardwareCommand.Delete.class
    })
public final class HardwareCommand extends GroupCommand {
  static final List<Column> COLUMNS =
      List.of(
          Column.field("ID", "id"),
          Column.field("MAC", "primaryMac"),
          Column.field("SYSTEM-UUID", "systemUuid"),
          Column.field("MACHINE", "machineId"),
          Column.of("LABELS", r -> Cells.pairs(r.get("labels"))),
          Column.wide("CREATED", r -> Cells.text(r.get("createdAt"))));

  @Command(name = "ls", aliases = "list", description = "List the hardware records.")
  static final class Ls extends SessionCommand {
    @Override
    public Integer call() {
      return print(api().list("/v1/hardware", Map.of()), COLUMNS);
    }
  }

  @Command(name = "get", description = "Show one record (by its MAC or system UUID).")
  static final class Get extends SessionCommand {
    @Parameters(index = "0", paramLabel = "MAC-OR-UUID")
    String id;

    @Override
    public Integer call() {
      return print(api().get("/v1/hardware/" + id), COLUMNS);
    }
  }

  @Command(
      name = "add",
      aliases = "set",
      description = "Register (or replace) a server by its MAC or system UUID, before it boots.")
  static final class Add extends SessionCommand {
    @Parameters(
        index = "0",
        paramLabel = "MAC-OR-UUID",
        description = "what the record is named by")
    String id;

    @Option(
        names = "--mac",
        paramLabel = "MAC",
        description = "for a record named by its UUID: its MAC must match too")
    String mac;

    @Option(
        names = "--uuid",
        paramLabel = "UUID",
        description = "for a record named by its MAC: its UUID must match too")
    String uuid;

    @Option(
        names = "--label",
        paramLabel = "KEY=VALUE",
        description = "a label the machine gets (repeatable)")
    Map<String, String> labels;

    @Override
    public Integer call() {
      ObjectNode body = JsonNodeFactory.instance.objectNode();
      if (mac != null) {
        body.put("primaryMac", mac);
      }
      if (uuid != null) {
        body.put("systemUuid", uuid);
      }
      if (labels != null) {
        labels.forEach(body.putObject("labels")::put);
      }
      return print(api().put("/v1/hardware/" + id, body), COLUMNS);
    }
  }

  @Command(
      name = "delete",
      aliases = "rm",
      description = "Delete records (machines they admitted stay admitted).")
  static final class Delete extends SessionCommand {
    @Parameters(paramLabel = "MAC-OR-UUID", arity = "1..*")
    List<String> ids;

    @Override
    public Integer call() {
      for (String id : ids) {
        api().delete("/v1/hardware/" + id);
        session().out().println(id + " deleted");
      }
      return 0;
    }
  }
}
