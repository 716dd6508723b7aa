package io.warmmetal.api.http;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.protocol.testing.Await;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * A burst of failures is one WARN and a summary per window, never a stack trace; a quiet window
 * ends it.
 */
@ExtendWith(VertxExtension.class)
class OutageLogTest {

  @Test
  void aBurstIsOneWarnThenASummaryAndAQuietWindowEndsIt(Vertx vertx) throws Exception {
    Logger logger = (Logger) LoggerFactory.getLogger("test.outage");
    ListAppender<ILoggingEvent> logged = capture(logger);
    OutageLog outage =
        new OutageLog(logger, "database unavailable", "requests", Duration.ofMillis(300));
    Runnable fiveFailures =
        () -> {
          for (int i = 0; i < 5; i++) {
            outage.failed(new ConnectException("Connection refused"));
          }
        };

    vertx.runOnContext(v -> fiveFailures.run());
    Await.until("the summary", () -> logged.list.size() >= 2);
    Await.until("a quiet window ends the burst", () -> !outage.inBurst());
    vertx.runOnContext(v -> fiveFailures.run());
    Await.until("the next burst's first line", () -> logged.list.size() >= 3);

    List<String> lines = logged.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    assertThat(lines.get(0))
        .isEqualTo("database unavailable: ConnectException: Connection refused");
    assertThat(lines.get(1))
        .matches("database unavailable: 4 more requests failed in the last \\ds");
    assertThat(lines.get(2)).isEqualTo(lines.get(0));
    assertThat(logged.list).noneMatch(e -> e.getThrowableProxy() != null);
    logger.detachAppender(logged);
  }

  /**
   * Each test's Vert.x is closed after it: a burst left open with it must not swallow the next
   * test's first line.
   */
  @Test
  void aBurstWhoseVertxClosedDoesNotSilenceTheNextVertxsFailures(Vertx vertx) throws Exception {
    Logger logger = (Logger) LoggerFactory.getLogger("test.outage.closed");
    ListAppender<ILoggingEvent> logged = capture(logger);
    OutageLog outage =
        new OutageLog(logger, "database unavailable", "requests", Duration.ofMinutes(1));
    Vertx earlier = Vertx.vertx();
    earlier.runOnContext(v -> outage.failed(new ConnectException("Connection refused")));
    Await.until("the earlier burst's first line", () -> logged.list.size() == 1);
    earlier.close().await();
    assertThat(outage.inBurst()).as("its window's timer went with its Vert.x").isTrue();

    vertx.runOnContext(v -> outage.failed(new ConnectException("Connection reset")));
    Await.until("the next burst's first line", () -> logged.list.size() == 2);
    assertThat(logged.list.get(1).getFormattedMessage())
        .isEqualTo("database unavailable: ConnectException: Connection reset");
    logger.detachAppender(logged);
  }

  private static ListAppender<ILoggingEvent> capture(Logger logger) {
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    logger.addAppender(logged);
    return logged;
  }
}
