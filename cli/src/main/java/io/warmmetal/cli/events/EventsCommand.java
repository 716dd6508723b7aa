package io.warmmetal.cli.events;

import com.fasterxml.jackson.databind.node.ArrayNode;
import io.warmmetal.cli.http.ApiUnreachable;
import io.warmmetal.cli.output.OutputFormat;
import io.warmmetal.cli.session.SessionCommand;
import java.time.Duration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code warmmetal events [--machine M] [--instance I] [--follow]}: the event log, read on with its
 * since-cursor.
 */
@Command(
    name = "events",
    description = "Show state changes, oldest first; --follow keeps reading (Ctrl-C ends).")
public final class EventsCommand extends SessionCommand {
  @Option(names = "--machine", paramLabel = "MACHINE", description = "only this machine's events")
  String machine;

  @Option(
      names = "--instance",
      paramLabel = "INSTANCE",
      description = "only this instance's events")
  String instance;

  @Option(
      names = "--since",
      paramLabel = "CURSOR",
      description = "start after this cursor (an event's seq)")
  String since;

  @Option(
      names = {"-f", "--follow"},
      description = "keep polling for new events until interrupted")
  boolean follow;

  @Option(
      names = "--interval",
      defaultValue = "2",
      paramLabel = "SECONDS",
      description = "polling interval (default 2)")
  double interval;

  @Override
  public Integer call() {
    EventFeed feed = new EventFeed(api(), machine, instance, since);
    OutputFormat format = session().output();
    var out = session().out();
    boolean header = true;
    do {
      ArrayNode events;
      try {
        events = feed.next();
      } catch (ApiUnreachable e) {
        if (follow && Thread.currentThread().isInterrupted()) {
          break; // stopped while a request was under way
        }
        throw e;
      }
      if (!events.isEmpty() || header) {
        EventFormat.print(out, format, events, header);
        header = false;
      }
      if (follow && !EventFeed.pause(Duration.ofMillis((long) (interval * 1000)))) {
        break; // interrupted: Ctrl-C in a terminal, or the caller stopping us
      }
    } while (follow && !Thread.currentThread().isInterrupted());
    return 0;
  }
}
