package io.warmmetal.cli.machines;

import io.warmmetal.cli.output.OutputFormat;
import io.warmmetal.cli.session.ExitCode;
import io.warmmetal.cli.session.SessionCommand;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code warmmetal machines recover M --action …}: over the machine's SSH access, for an agent that
 * does not answer.
 */
@Command(
    name = "recover",
    description = "Restart the agent, reset the host, or reboot it, over SSH.")
final class RecoverCommand extends SessionCommand {
  @Parameters(index = "0", paramLabel = "MACHINE")
  String id;

  @Option(
      names = "--action",
      defaultValue = "restart-agent",
      description = "restart-agent (default), reset or reboot")
  String action;

  @Override
  public Integer call() {
    var result =
        ResetPending.explained(
            api(),
            id,
            () -> api().post("/v1/machines/" + id + "/recover", Map.of("action", action)));
    if (session().output() == OutputFormat.JSON || session().output() == OutputFormat.YAML) {
      session().printer().print(result, List.of());
    } else {
      session()
          .out()
          .println(
              id
                  + " "
                  + action
                  + ": "
                  + (result.path("succeeded").asBoolean()
                      ? "succeeded"
                      : result.path("timedOut").asBoolean()
                          ? "timed out"
                          : "failed, exit " + result.path("exitStatus")));
      session().out().print(result.path("output").asText());
      session().out().flush();
    }
    return result.path("succeeded").asBoolean() ? ExitCode.OK : ExitCode.API_ERROR;
  }
}
