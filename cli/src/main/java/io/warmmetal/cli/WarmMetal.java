package io.warmmetal.cli;

import io.warmmetal.cli.boot.BootCommand;
import io.warmmetal.cli.events.EventsCommand;
import io.warmmetal.cli.hardware.HardwareCommand;
import io.warmmetal.cli.instances.InstancesCommand;
import io.warmmetal.cli.machines.MachinesCommand;
import io.warmmetal.cli.output.OutputFormat;
import io.warmmetal.cli.pools.PoolsCommand;
import io.warmmetal.cli.projects.ProjectsCommand;
import io.warmmetal.cli.session.GroupCommand;
import io.warmmetal.cli.session.Session;
import io.warmmetal.cli.shapes.ShapesCommand;
import io.warmmetal.cli.tokens.EnrollmentTokensCommand;
import io.warmmetal.cli.tokens.TokensCommand;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * {@code warmmetal}: the root command; its options apply to every subcommand (flags over env over
 * config file), and so do {@code --help} and {@code --version} ({@code warmmetal machines ls
 * --help}).
 */
@Command(
    name = "warmmetal",
    mixinStandardHelpOptions = true,
    scope = ScopeType.INHERIT,
    version = "warmmetal 0.1.0",
    description = "Bare-metal servers kept warm in pools, from the command line.",
    subcommands = {
      ShapesCommand.class,
      PoolsCommand.class,
      MachinesCommand.class,
      HardwareCommand.class,
      InstancesCommand.class,
      EventsCommand.class,
      TokensCommand.class,
      EnrollmentTokensCommand.class,
      ProjectsCommand.class,
      BootCommand.class,
      ConfigCommand.class,
      CompletionCommand.class
    },
    footer = {
      "",
      "Exit codes: 0 ok, 1 API error, 2 usage error, 3 API unreachable, 4 --wait timed out or failed."
    })
public final class WarmMetal extends GroupCommand implements Session.Holder {
  private final Session session;

  public WarmMetal(Session session) {
    this.session = session;
  }

  @Override
  public Session session() {
    return session;
  }

  @Option(
      names = "--api",
      scope = ScopeType.INHERIT,
      paramLabel = "URL",
      description = "API URL (WARMMETAL_API, config 'api')")
  void api(String value) {
    session.api(value);
  }

  @Option(
      names = "--token",
      scope = ScopeType.INHERIT,
      paramLabel = "TOKEN",
      description =
          "bearer token (WARMMETAL_TOKEN, config 'token'); prefer those: flags land in shell history")
  void token(String value) {
    session.token(value);
  }

  @Option(
      names = "--project",
      scope = ScopeType.INHERIT,
      paramLabel = "PROJECT",
      description =
          "project to act in, sent as WarmMetal-Project (WARMMETAL_PROJECT, config 'project')")
  void project(String value) {
    session.project(value);
  }

  @Option(
      names = "--ca-file",
      scope = ScopeType.INHERIT,
      paramLabel = "PEM",
      description = "a private CA to trust besides the JDK's (WARMMETAL_CA_FILE, config 'ca-file')")
  void caFile(String value) {
    session.caFile(value);
  }

  @Option(
      names = {"-o", "--output"},
      scope = ScopeType.INHERIT,
      paramLabel = "FORMAT",
      converter = OutputConverter.class,
      description = "table (default), wide, json or yaml")
  void output(OutputFormat value) {
    session.output(value);
  }

  static final class OutputConverter implements picocli.CommandLine.ITypeConverter<OutputFormat> {
    @Override
    public OutputFormat convert(String value) {
      return OutputFormat.parse(value);
    }
  }
}
