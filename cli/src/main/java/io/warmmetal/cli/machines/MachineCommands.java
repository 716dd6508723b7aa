package io.warmmetal.cli.machines;

import com.fasterxml.jackson.databind.JsonNode;
import io.warmmetal.cli.output.Cells;
import io.warmmetal.cli.output.Column;
import io.warmmetal.cli.session.SessionCommand;
import io.warmmetal.cli.session.UsageProblem;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * A machine's commands (prepare, join, reset, reboot), and an operator reporting one's outcome for
 * a machine whose agent cannot: {@code POST /v1/commands/{id}/result}, as the agent would.
 */
final class MachineCommands {
  private MachineCommands() {}

  static List<Column> columns(Instant now) {
    return List.of(
        Column.field("ID", "id"),
        Column.field("TYPE", "type"),
        Column.field("STATUS", "status"),
        Column.field("INSTANCE", "instanceId"),
        Column.of("AGE", c -> Cells.age(c.get("createdAt"), now)),
        Column.field("MESSAGE", "message"));
  }

  @Command(
      name = "commands",
      description =
          "List a machine's commands, oldest first (queued and delivered ones "
              + "are open: the agent has not reported them).")
  static final class Ls extends SessionCommand {
    @Parameters(index = "0", paramLabel = "MACHINE")
    String id;

    @Override
    public Integer call() {
      return print(
          api().list("/v1/machines/" + id + "/commands", Map.of()),
          columns(session().clock().instant()));
    }
  }

  @Command(
      name = "report",
      description =
          "Report the outcome of a machine's open command for an agent that cannot "
              + "(it is gone, or you ran the reset by hand): succeeded moves the machine on, failed quarantines it.")
  static final class Report extends SessionCommand {
    @Parameters(index = "0", paramLabel = "MACHINE")
    String id;

    @Option(
        names = "--status",
        required = true,
        paramLabel = "succeeded|failed",
        description = "the outcome")
    Outcome status;

    @Option(names = "--message", description = "why (kept with the command and its event)")
    String message;

    @Option(
        names = "--command",
        paramLabel = "COMMAND",
        description =
            "which open command (needed when it has "
                + "several; `machines commands MACHINE` lists them)")
    String command;

    enum Outcome {
      succeeded,
      failed
    }

    @Override
    public Integer call() {
      String commandId = command != null ? command : theOpenCommand();
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("status", status.name());
      if (message != null) {
        body.put("message", message);
      }
      return print(
          api().post("/v1/commands/" + commandId + "/result", body),
          columns(session().clock().instant()));
    }

    /** The machine's one open command; none or several is for the user to sort out. */
    private String theOpenCommand() {
      List<String> open = new ArrayList<>();
      for (JsonNode c : api().list("/v1/machines/" + id + "/commands", Map.of())) {
        String s = c.path("status").asText();
        if (s.equals("queued") || s.equals("delivered")) {
          open.add(c.path("id").asText() + " (" + c.path("type").asText() + ")");
        }
      }
      if (open.isEmpty()) {
        throw new UsageProblem(
            "machine "
                + id
                + " has no open command: nothing to report (`warmmetal machines "
                + "commands "
                + id
                + "` lists its commands)");
      }
      if (open.size() > 1) {
        throw new UsageProblem(
            "machine "
                + id
                + " has "
                + open.size()
                + " open commands, "
                + String.join(", ", open)
                + ": name one with --command (the oldest first: a later one waits for it)");
      }
      return open.get(0).substring(0, open.get(0).indexOf(' '));
    }
  }
}
