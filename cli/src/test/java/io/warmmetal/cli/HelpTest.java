package io.warmmetal.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.cli.session.ExitCode;
import io.warmmetal.cli.testing.CliFixture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import picocli.CommandLine;

/**
 * Every command answers {@code --help} and {@code -h} with its usage, exit 0, without asking the
 * API anything.
 */
class HelpTest {
  @RegisterExtension static final CliFixture fx = new CliFixture();

  /**
   * Every command's path from the root, e.g. {@code [machines, ls]}, found by walking the command
   * tree.
   */
  private static List<List<String>> commands(CommandLine command, List<String> path) {
    List<List<String>> all = new ArrayList<>();
    all.add(path);
    command
        .getSubcommands()
        .forEach(
            (name, sub) -> {
              if (sub.getCommandName().equals(name)) { // each once, not again under its aliases
                List<String> longer = new ArrayList<>(path);
                longer.add(name);
                all.addAll(commands(sub, longer));
              }
            });
    return all;
  }

  @Test
  void everyCommandAnswersHelp() {
    List<List<String>> commands = commands(new CommandLine(new WarmMetal(null)), List.of());
    assertThat(commands).as("the command tree").hasSizeGreaterThan(40);
    // No API and no config file: help needs neither.
    Map<String, String> nothing =
        Map.of("WARMMETAL_CONFIG", fx.home.resolve("none.yaml").toString());
    for (List<String> path : commands) {
      for (String flag : List.of("--help", "-h")) {
        List<String> args = new ArrayList<>(path);
        args.add(flag);
        var run = CliFixture.run(nothing, args.toArray(String[]::new));
        assertThat(run.code()).as("%s: %s", args, run.err()).isEqualTo(ExitCode.OK);
        assertThat(run.out())
            .as("%s", args)
            .startsWith("Usage: warmmetal" + (path.isEmpty() ? "" : " " + String.join(" ", path)));
      }
    }
  }
}
