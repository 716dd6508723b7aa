package io.warmmetal.cli;

import io.warmmetal.cli.config.ConfigFile;
import io.warmmetal.cli.config.Settings;
import io.warmmetal.cli.session.GroupCommand;
import io.warmmetal.cli.session.SessionCommand;
import io.warmmetal.cli.session.UsageProblem;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code warmmetal config set|view}: the config file ({@code $WARMMETAL_CONFIG} or
 * ~/.config/warmmetal/config.yaml).
 */
@Command(
    name = "config",
    description = "Show or change the config file.",
    subcommands = {ConfigCommand.Set.class, ConfigCommand.View.class})
final class ConfigCommand extends GroupCommand {

  @Command(
      name = "set",
      description = "Set api, token, project or ca-file in the config file (written 0600).")
  static final class Set extends SessionCommand {
    @Parameters(
        index = "0",
        paramLabel = "KEY",
        completionCandidates = Keys.class,
        description = "${COMPLETION-CANDIDATES}")
    String key;

    @Parameters(
        index = "1",
        paramLabel = "VALUE",
        description = "the value; '-' reads it from stdin (keeps a token out of shell history)")
    String value;

    @Override
    public Integer call() throws Exception {
      if (!ConfigFile.KEYS.contains(key)) {
        throw new UsageProblem("unknown key '" + key + "': one of api, token, project, ca-file");
      }
      String v =
          "-".equals(value)
              ? new BufferedReader(new InputStreamReader(session().in(), StandardCharsets.UTF_8))
                  .readLine()
              : value;
      if (v == null || v.isBlank()) {
        throw new UsageProblem("no value for " + key);
      }
      ConfigFile file = session().configFile();
      String exposed = file.exposedToken();
      file.set(key, v.strip());
      session().err().println(key + " set in " + file.path());
      if (exposed != null) { // set writes it 0600: fixed now, but the old token may have been read
        // meanwhile
        session()
            .err()
            .println(
                "note: "
                    + file.path()
                    + " was "
                    + exposed
                    + " with a token in it; it is rw------- now."
                    + " If someone may have read that token, revoke it.");
      }
      return 0;
    }
  }

  @Command(name = "view", description = "Show the settings in effect (never the token itself).")
  static final class View extends SessionCommand {
    @Override
    public Integer call() {
      Settings s = session().settings();
      var out = session().out();
      out.println("config: " + session().configFile().path());
      out.println("api:     " + orUnset(s.api()));
      out.println("token:   " + (s.token() == null ? "(unset)" : "(set)"));
      out.println("project: " + orUnset(s.project()));
      out.println("ca-file: " + orUnset(s.caFile()));
      out.flush();
      return 0;
    }

    private static String orUnset(String v) {
      return v == null ? "(unset)" : v;
    }
  }

  static final class Keys extends ArrayList<String> {
    Keys() {
      super(List.of("api", "token", "project", "ca-file"));
    }
  }
}
