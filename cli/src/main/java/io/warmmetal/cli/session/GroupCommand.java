package io.warmmetal.cli.session;

import picocli.CommandLine.ParameterException;

/**
 * A command that only groups subcommands ({@code warmmetal machines}): without one it is a usage
 * error.
 */
public abstract class GroupCommand extends SessionCommand {
  @Override
  public Integer call() {
    throw new ParameterException(
        spec.commandLine(), "Missing subcommand: one of " + spec.subcommands().keySet());
  }
}
