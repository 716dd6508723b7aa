package io.warmmetal.api.db;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.testing.StandardErrorCapture;
import io.warmmetal.api.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * A connection held from the pool (a transaction's) whose server process is terminated, as every
 * one is when PostgreSQL restarts: its failures (the server's FATAL, often a connection reset after
 * it) go to the log at DEBUG, not to standard error as raw stack traces.
 */
@ExtendWith(VertxExtension.class)
class QuietPoolTest {

  @Test
  void aHeldConnectionsFailureIsLoggedNotPrinted(Vertx vertx) throws Exception {
    Pool pool = Database.pool(vertx, Database.connectOptions(TestDatabase.freshDatabaseUrl()), 2);
    Logger logger = (Logger) LoggerFactory.getLogger(QuietPool.class);
    Level level = logger.getLevel();
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    logger.addAppender(logged);
    logger.setLevel(Level.DEBUG);
    try (StandardErrorCapture printed = new StandardErrorCapture()) {
      SqlConnection held = pool.getConnection().await();
      Promise<Void> closed = Promise.promise();
      held.closeHandler(v -> closed.tryComplete());
      int pid =
          held.query("SELECT pg_backend_pid()").execute().await().iterator().next().getInteger(0);

      assertThat(
              pool.preparedQuery("SELECT pg_terminate_backend($1)")
                  .execute(Tuple.of(pid))
                  .await()
                  .iterator()
                  .next()
                  .getBoolean(0))
          .isTrue();
      closed.future().await();

      // The server's FATAL, and often the reset of the socket after it: each a DEBUG line.
      assertThat(logged.list)
          .as("the failure, logged")
          .isNotEmpty()
          .allMatch(e -> e.getLevel() == Level.DEBUG && e.getThrowableProxy() == null);
      assertThat(logged.list.get(0).getFormattedMessage()).contains("57P01");
      assertThat(printed.text()).as("printed to standard error").isEmpty();
    } finally {
      logger.detachAppender(logged);
      logger.setLevel(level);
      pool.close().await();
    }
  }
}
