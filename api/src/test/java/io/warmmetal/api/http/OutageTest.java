package io.warmmetal.api.http;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.TcpProxy;
import io.warmmetal.api.testing.TestDatabase;
import io.warmmetal.protocol.testing.Await;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * The database goes away under a running API (a TCP proxy in front of the real PostgreSQL is cut):
 * every operation answers 503 ServiceUnavailable with Retry-After in the one error shape — never
 * 500, nor 401 for an unverifiable token — the log gets a WARN per burst, not a stack trace per
 * request, and service returns with the database.
 */
@ExtendWith(VertxExtension.class)
class OutageTest {
  private static final String SHAPE = "x86-8c-32g";

  private TcpProxy proxy;
  private ApiFixture fx;
  private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
  private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    TestDatabase.Proxied db = TestDatabase.freshDatabaseBehindProxy(vertx);
    proxy = db.proxy();
    fx = ApiFixture.start(vertx, Map.of("WARMMETAL_DATABASE_URL", db.url()));
    logged.start();
    root.addAppender(logged);
  }

  @AfterEach
  void stop() {
    root.detachAppender(logged);
    fx.close();
    proxy.close();
  }

  @Test
  void everyOperationAnswers503WithRetryAfterWhileTheDatabaseIsDownThenServiceReturns()
      throws Exception {
    String machineId = fx.registerMachines(3, ApiFixture.facts(8, 32), true).get(0);
    String client =
        fx.token(
            "client"); // never used yet: not in the token cache, so checking it needs the database
    Response launched =
        fx.client.post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", SHAPE));
    assertThat(launched.status()).as(launched.raw()).isEqualTo(201);
    String instanceId = launched.body().getJsonArray("instances").getJsonObject(0).getString("id");
    Response tooMany =
        fx.client.post(
            "/v1/instances",
            ApiFixture.ADMIN,
            new JsonObject().put("shape", SHAPE).put("minCount", 10));
    assertThat(tooMany.status()).as(tooMany.raw()).isEqualTo(503);
    assertThat(tooMany.errorCode()).isEqualTo("InsufficientCapacity");
    assertThat(tooMany.headers().get("Retry-After"))
        .as("capacity refusals say when to retry too")
        .isEqualTo("5");
    logged.list.clear();

    proxy.cut();
    List<Supplier<Response>> calls =
        List.of(
            () -> fx.client.get("/v1/machines", ApiFixture.ADMIN),
            () -> fx.client.get("/v1/machines/" + machineId, ApiFixture.ADMIN),
            () -> fx.client.get("/v1/instances/" + instanceId, ApiFixture.ADMIN),
            () ->
                fx.client.post(
                    "/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", SHAPE)),
            () -> fx.client.get("/v1/instances", client),
            () -> fx.client.get("/v1/events", ApiFixture.ADMIN),
            () -> fx.client.get("/v1/shapes", ApiFixture.ADMIN));
    for (int round = 0; round < 3; round++) {
      for (Supplier<Response> call : calls) {
        assertUnavailable(call.get());
      }
    }
    assertUnavailable(fx.client.get("/readyz", null));

    assertThat(logged.list)
        .as("no ERROR and no stack trace during the outage: " + logged.list)
        .noneMatch(
            e -> e.getLevel().isGreaterOrEqual(Level.ERROR) || e.getThrowableProxy() != null);
    assertThat(
            logged.list.stream()
                .filter(e -> e.getFormattedMessage().startsWith("database unavailable")))
        .as("one WARN for the burst of failed requests")
        .hasSize(1);

    proxy.restore();
    Await.until(
        "the API answers again",
        () -> fx.client.get("/v1/machines", ApiFixture.ADMIN).status() == 200);
    assertThat(fx.client.get("/v1/instances", client).status()).isEqualTo(200);
    Response again =
        fx.client.post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", SHAPE));
    assertThat(again.status()).as(again.raw()).isEqualTo(201);
    assertThat(fx.client.get("/readyz", null).status()).isEqualTo(200);
  }

  private static void assertUnavailable(Response r) {
    assertThat(r.status()).as(r.raw()).isEqualTo(503);
    assertThat(r.errorCode()).isEqualTo("ServiceUnavailable");
    assertThat(r.body().getString("message")).isNotBlank();
    assertThat(r.body().getString("requestId")).isNotBlank();
    assertThat(r.headers().get("Retry-After")).as("Retry-After").matches("[1-9][0-9]*");
  }
}
