package io.warmmetal.cli;

import io.warmmetal.cli.session.SessionCommand;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code warmmetal completion bash|zsh}: picocli's generated script (it sets up bashcompinit itself
 * under zsh).
 */
@Command(
    name = "completion",
    description = "Print a shell completion script: source <(warmmetal completion bash)")
final class CompletionCommand extends SessionCommand {
  enum Shell {
    bash,
    zsh
  }

  @Parameters(index = "0", description = "bash or zsh")
  Shell shell;

  @Override
  public Integer call() {
    session().out().print(AutoComplete.bash("warmmetal", spec.root().commandLine()));
    session().out().flush();
    return 0;
  }
}
