package io.warmmetal.cli;

import io.warmmetal.cli.session.Session;
import picocli.CommandLine;

/** Builds the command line for a session; {@link #run} is what {@link Main} and the tests call. */
public final class Cli {
  private Cli() {}

  public static CommandLine commandLine(Session session) {
    CommandLine cl = new CommandLine(new WarmMetal(session));
    cl.setOut(session.out());
    cl.setErr(session.err());
    cl.setExecutionExceptionHandler(new Failures());
    return cl;
  }

  /** Runs one command line; never exits the JVM. */
  public static int run(Session session, String... args) {
    int code = commandLine(session).execute(args);
    session.out().flush();
    session.err().flush();
    return code;
  }
}
