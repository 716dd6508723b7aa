package io.warmmetal.api.db;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.StandardErrorCapture;
import io.warmmetal.api.testing.TcpProxy;
import io.warmmetal.protocol.testing.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL itself stopped (a fast shutdown: every connection dropped) and started again under a
 * stream of launches and reads: meanwhile only 503s with Retry-After — never a 500 — and service is
 * back promptly once the database accepts connections again (within 10 s on a loaded machine; the
 * figure is printed). A launch whose answer was a 503 is retried with its client token: none is
 * lost, none launched twice. The server restarts on another port, so a TCP proxy keeps the API's
 * address for it. The restart is one WARN line per source in the log, and nothing on standard
 * error: no stack trace, logged or printed (docs/errors-and-retries.md, "In the log").
 */
@ExtendWith(VertxExtension.class)
class DatabaseRestartTest {
  private static final int CLIENTS = 12;
  private static final String SHAPE = "x86-8c-32g";

  @Test
  void onlyServiceUnavailableWhileTheDatabaseRestartsAndServiceReturnsPromptly(Vertx vertx)
      throws Exception {
    Path dir = Files.createTempDirectory("warmmetal-restart-pg");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
    EmbeddedPostgres pg = EmbeddedPostgres.start(dir);
    pg.ensureDatabase("warmmetal");
    var target = Database.connectOptions(pg.url("warmmetal"));
    TcpProxy proxy = TcpProxy.start(vertx, "127.0.0.1", pg.port());
    String url =
        "postgresql://"
            + target.getUser()
            + ":"
            + target.getPassword()
            + "@127.0.0.1:"
            + proxy.port()
            + "/warmmetal";
    ApiFixture fx = ApiFixture.start(vertx, Map.of("WARMMETAL_DATABASE_URL", url));
    EmbeddedPostgres again = null;
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    StandardErrorCapture printed = null;
    try {
      fx.registerMachines(2000, ApiFixture.facts(8, 32), true);
      Map<Integer, Long> statuses = new ConcurrentHashMap<>();
      Set<String> launched = ConcurrentHashMap.newKeySet();
      AtomicLong withoutRetryAfter = new AtomicLong();
      AtomicLong firstSuccessAfterRestart = new AtomicLong();
      AtomicLong restartedAt = new AtomicLong(Long.MAX_VALUE);
      AtomicBoolean running = new AtomicBoolean(true);
      Future<?>[] clients = new Future<?>[CLIENTS];
      for (int c = 0; c < CLIENTS; c++) {
        clients[c] =
            loop(
                fx,
                c % 4 == 0,
                running,
                statuses,
                launched,
                withoutRetryAfter,
                restartedAt,
                firstSuccessAfterRestart);
      }

      Await.until("the load under way", () -> answered(statuses, 200, 201) >= 2 * CLIENTS);
      logged.start();
      root.addAppender(logged);
      printed = new StandardErrorCapture();
      long stopping = System.nanoTime();
      pg.close(); // pg_ctl stop -m fast: the server goes, its connections with it
      long refusedBefore = answered(statuses, 503);
      Await.until(
          "the outage answered", () -> answered(statuses, 503) >= refusedBefore + 2 * CLIENTS);
      again = EmbeddedPostgres.start(dir);
      proxy.retarget(again.port());
      restartedAt.set(System.nanoTime());
      Await.until("service back", () -> firstSuccessAfterRestart.get() > 0);
      long answeredBack = answered(statuses, 200, 201);
      Await.until(
          "the load served again",
          () -> answered(statuses, 200, 201) >= answeredBack + 2 * CLIENTS);
      running.set(false);
      Future.join(Arrays.asList(clients)).await();
      printed.close();
      root.detachAppender(logged);

      long backAfterMillis = (firstSuccessAfterRestart.get() - restartedAt.get()) / 1_000_000;
      System.out.printf(
          "database restart under load: %s by status; down %.1f s (stop to restart), service back"
              + " %d ms after the database accepted connections; %d launches%n",
          new TreeMap<>(statuses),
          (restartedAt.get() - stopping) / 1e9,
          backAfterMillis,
          launched.size());
      assertThat(statuses.keySet()).as("only successes and 503s").isSubsetOf(200, 201, 503);
      assertThat(statuses.getOrDefault(503, 0L)).as("the outage was seen").isPositive();
      assertThat(withoutRetryAfter.get()).as("503s without Retry-After").isZero();
      assertThat(firstSuccessAfterRestart.get()).as("service returned").isPositive();
      // Promptly, not after a backoff or a pool's idle timeout (typically well under a second; 10 s
      // leaves room for a
      // loaded machine).
      assertThat(backAfterMillis).as("service back within 10 s of the database").isLessThan(10_000);
      // Every launch counted once: no machine twice, no launch without its instance.
      assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(launched.size());
      assertThat(
              fx.count(
                  "SELECT count(*) FROM (SELECT machine_id FROM instances GROUP BY machine_id"
                      + " HAVING count(*) > 1) twice"))
          .isZero();
      assertThat(
              fx.count(
                  "SELECT count(*) FROM machines m WHERE m.instance_id IS NOT NULL AND NOT EXISTS"
                      + " (SELECT 1 FROM instances i WHERE i.id = m.instance_id)"))
          .isZero();

      // The log: one WARN per source (its burst's first failure), no ERROR, no stack trace;
      // standard error empty.
      List<ILoggingEvent> events = List.copyOf(logged.list);
      assertThat(printed.text()).as("printed to standard error").isEmpty();
      assertThat(events)
          .as("no ERROR and no stack trace: " + events)
          .noneMatch(
              e -> e.getLevel().isGreaterOrEqual(Level.ERROR) || e.getThrowableProxy() != null);
      Map<String, Long> warnings =
          events.stream()
              .filter(e -> e.getLevel() == Level.WARN)
              .collect(
                  Collectors.groupingBy(
                      e -> e.getLoggerName() + " " + e.getFormattedMessage().split(": ")[0],
                      TreeMap::new,
                      Collectors.counting()));
      System.out.println("warnings over the restart, by source: " + warnings);
      assertThat(warnings).as("the outage was logged").isNotEmpty();
      assertThat(warnings.values()).as("one line per source: " + warnings).allMatch(n -> n == 1);
    } finally {
      if (printed != null) {
        printed.close();
      }
      root.detachAppender(logged);
      fx.close();
      if (again != null) {
        again.close();
      }
      proxy.close();
      pg.close();
      try (var walk = Files.walk(dir)) {
        walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** Answers so far with any of {@code status}. */
  private static long answered(Map<Integer, Long> statuses, int... status) {
    return Arrays.stream(status).mapToLong(st -> statuses.getOrDefault(st, 0L)).sum();
  }

  /**
   * One client: launches with a client token, retried with the same token after a 503 until it gets
   * an answer — also after the load stops, so every launch the database may have committed is
   * confirmed — or, for a reader, reads instances; records every status.
   */
  private static Future<Void> loop(
      ApiFixture fx,
      boolean reader,
      AtomicBoolean running,
      Map<Integer, Long> statuses,
      Set<String> launched,
      AtomicLong withoutRetryAfter,
      AtomicLong restartedAt,
      AtomicLong firstSuccessAfterRestart) {
    Promise<Void> done = Promise.promise();
    Runnable[] next = new Runnable[1];
    String[] token = {UUID.randomUUID().toString()};
    boolean[] unanswered = {false};
    next[0] =
        () -> {
          if (!running.get() && !unanswered[0]) {
            done.complete();
            return;
          }
          Future<Response> sent =
              reader
                  ? fx.client.send(HttpMethod.GET, "/v1/instances?limit=5", ApiFixture.ADMIN, null)
                  : fx.client.send(
                      HttpMethod.POST,
                      "/v1/instances",
                      ApiFixture.ADMIN,
                      new JsonObject().put("shape", SHAPE).put("clientToken", token[0]));
          sent.onComplete(
              ar -> {
                int status = ar.succeeded() ? ar.result().status() : -1;
                statuses.merge(status, 1L, Long::sum);
                long now = System.nanoTime();
                unanswered[0] =
                    !reader
                        && status == 503
                        && "ServiceUnavailable".equals(ar.result().errorCode());
                if (status == 503 && ar.result().headers().get("Retry-After") == null) {
                  withoutRetryAfter.incrementAndGet();
                } else if (status >= 200 && status < 300) {
                  if (now > restartedAt.get()) {
                    firstSuccessAfterRestart.compareAndSet(0, now);
                  }
                  if (!reader) {
                    launched.add(
                        ar.result()
                            .body()
                            .getJsonArray("instances")
                            .getJsonObject(0)
                            .getString("id"));
                    token[0] =
                        UUID.randomUUID().toString(); // answered: the next launch is a new one
                  }
                }
                if (status == -1 || status == 500) {
                  unanswered[0] = false; // recorded; the assertion on statuses reports it
                }
                fx.vertx.setTimer(status == 503 ? 100 : 50, t -> next[0].run());
              });
        };
    next[0].run();
    return done.future();
  }
}
