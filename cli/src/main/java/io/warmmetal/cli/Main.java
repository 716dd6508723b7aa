package io.warmmetal.cli;

import io.warmmetal.cli.session.Session;
import java.io.PrintWriter;
import java.time.Clock;

/**
 * {@code java -jar warmmetal-cli.jar …} (or {@code cli/bin/warmmetal …}). The one place that exits.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    Session session =
        new Session(
            System.getenv(),
            System.in,
            new PrintWriter(System.out, true),
            new PrintWriter(System.err, true),
            Clock.systemUTC());
    System.exit(Cli.run(session, args));
  }
}
