package io.warmmetal.cli.machines;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.warmmetal.cli.session.SessionCommand;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** The idempotent one-word actions on a machine: {@code POST /v1/machines/{id}/<action>}. */
final class MachineActions {
  private MachineActions() {}

  abstract static class Action extends SessionCommand {
    @Parameters(paramLabel = "MACHINE", arity = "1..*", description = "one or more machine ids")
    List<String> ids;

    abstract String action();

    @Override
    public Integer call() {
      var done = JsonNodeFactory.instance.arrayNode();
      for (String id : ids) {
        done.add(
            ResetPending.explained(
                api(), id, () -> api().post("/v1/machines/" + id + "/" + action(), null)));
      }
      return print(done, MachinesCommand.columns(session().clock().instant()));
    }
  }

  @Command(name = "cordon", description = "Stop handing the machines out to new instances.")
  static final class Cordon extends Action {
    @Override
    String action() {
      return "cordon";
    }
  }

  @Command(name = "uncordon", description = "Hand the machines out again.")
  static final class Uncordon extends Action {
    @Override
    String action() {
      return "uncordon";
    }
  }

  @Command(
      name = "retire",
      description = "Take the machines out of the fleet for good (refused under an instance).")
  static final class Retire extends Action {
    @Override
    String action() {
      return "retire";
    }
  }

  @Command(
      name = "accept",
      description =
          "Admit new hardware (state new) that enrolled through a network boot: "
              + "it goes standby, where its pool prepares it. Check its facts and identity first (`machines get -o yaml`).")
  static final class Accept extends Action {
    @Override
    String action() {
      return "accept";
    }
  }

  @Command(
      name = "reject",
      description =
          "Refuse new hardware waiting for acceptance: it is retired and its "
              + "identity released.")
  static final class Reject extends Action {
    @Override
    String action() {
      return "reject";
    }
  }

  @Command(
      name = "reboot",
      description =
          "Tell the machines' agents to reboot: a network-booted server comes back "
              + "with its pool's image (refused under an instance).")
  static final class Reboot extends Action {
    @Override
    String action() {
      return "reboot";
    }
  }
}
