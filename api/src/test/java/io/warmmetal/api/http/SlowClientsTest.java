package io.warmmetal.api.http;

import static io.warmmetal.api.testing.RawHttp.assertClosedAtOnce;
import static io.warmmetal.api.testing.RawHttp.body;
import static io.warmmetal.api.testing.RawHttp.closeAll;
import static io.warmmetal.api.testing.RawHttp.elapsedMillis;
import static io.warmmetal.api.testing.RawHttp.readResponse;
import static io.warmmetal.api.testing.RawHttp.readUntilClosed;
import static io.warmmetal.api.testing.RawHttp.send;
import static io.warmmetal.api.testing.RawHttp.trickleUntilClosed;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.RawHttp;
import io.warmmetal.protocol.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

/**
 * The API port against slow and piled-up clients, with real sockets: stalled or trickled headers
 * are cut off on every request of a connection, stalled bodies answered 408, idle connections
 * closed, connections beyond the caps (per address, in total) refused while the others are served,
 * and what Vert.x refuses by itself answered in the error shape. The management port ({@code
 * /metrics}, the probes) has the API port's clocks and caps of its own, given the same values here:
 * the tests of headers, caps and refusals run on both. The agents' port has the same, and more:
 * {@code channel/AgentPortLimitsTest}.
 */
@ExtendWith(VertxExtension.class)
class SlowClientsTest {
  private static final int HEADER_SECONDS = 2;
  private static final int BODY_SECONDS = 1;
  private static final int IDLE_SECONDS = 3;
  private static final int CAP = 6;
  private static final int CAP_PER_ADDRESS = 3;

  private static ApiFixture fx;

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    fx =
        ApiFixture.start(
            vertx,
            Map.of(
                "WARMMETAL_HTTP_HEADER_TIMEOUT_SECONDS", Integer.toString(HEADER_SECONDS),
                "WARMMETAL_HTTP_BODY_TIMEOUT_SECONDS", Integer.toString(BODY_SECONDS),
                "WARMMETAL_HTTP_IDLE_TIMEOUT_SECONDS", Integer.toString(IDLE_SECONDS),
                "WARMMETAL_HTTP_MAX_CONNECTIONS", Integer.toString(CAP),
                "WARMMETAL_HTTP_MAX_CONNECTIONS_PER_ADDRESS", Integer.toString(CAP_PER_ADDRESS),
                "WARMMETAL_METRICS_MAX_CONNECTIONS", Integer.toString(CAP),
                "WARMMETAL_METRICS_MAX_CONNECTIONS_PER_ADDRESS",
                    Integer.toString(CAP_PER_ADDRESS)));
  }

  @AfterAll
  static void stop() {
    fx.close();
  }

  private static Socket connect() throws IOException {
    return RawHttp.connect(fx.api.port());
  }

  private static Socket connectFrom(String address) throws IOException {
    return connectFrom("api", address);
  }

  /**
   * @param port as {@code /metrics} names it: api, management
   */
  private static Socket connectFrom(String port, String address) throws IOException {
    return RawHttp.connect("api".equals(port) ? fx.api.port() : fx.api.metricsPort(), address);
  }

  @Test
  void aClientThatSendsHalfItsHeadersThenStallsIsDisconnected() throws Exception {
    try (Socket s = connect()) {
      send(s, "GET /v1/machines HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ");
      long started = System.nanoTime();
      assertThat(readUntilClosed(s, HEADER_SECONDS + 5)).as("nothing answered").isEmpty();
      assertThat(elapsedMillis(started))
          .isBetween(HEADER_SECONDS * 1000L - 500, HEADER_SECONDS * 1000L + 3000);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"api", "management"})
  void aClientTricklingItsHeadersIsDisconnectedAtTheHeaderTimeout(String port) throws Exception {
    // A byte every 300 ms keeps the idle timeout from firing: only the header timeout ends this.
    try (Socket s = connectFrom(port, "127.0.0.1")) {
      send(s, "GET /v1/machines HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      assertThat(trickleUntilClosed(s, HEADER_SECONDS + 5))
          .isBetween(HEADER_SECONDS * 1000L - 500, HEADER_SECONDS * 1000L + 1500);
    }
  }

  @Test
  void
      aKeepAliveConnectionWhoseNextRequestTricklesIsClosedAHeaderTimeoutAfterThatRequestsFirstByte()
          throws Exception {
    try (Socket s = connect()) {
      send(s, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      assertThat(readResponse(s)).startsWith("HTTP/1.1 200");
      // Idle a while first (less than the idle timeout): the next request's clock starts at its
      // first byte.
      Thread.sleep(1000);
      send(s, "GET /v1/machines HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      assertThat(trickleUntilClosed(s, HEADER_SECONDS + 5))
          .isBetween(HEADER_SECONDS * 1000L - 500, HEADER_SECONDS * 1000L + 1500);
    }
  }

  @Test
  void everyRequestOnAKeepAliveConnectionIsServedWhileEachComesInTime() throws Exception {
    try (Socket s = connect()) {
      long started = System.nanoTime();
      int served = 0;
      // Well past the header timeout in all, each request whole.
      while (elapsedMillis(started) < (HEADER_SECONDS + 1) * 1000L) {
        send(s, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        assertThat(readResponse(s)).startsWith("HTTP/1.1 200");
        served++;
        Thread.sleep(300);
      }
      assertThat(served).isGreaterThan(5);
    }
  }

  @Test
  void aBodyThatStallsMidwayIsAnswered408AndTheConnectionClosed() throws Exception {
    try (Socket s = connect()) {
      send(
          s,
          "POST /v1/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
              + ApiFixture.ADMIN
              + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"shape\":");
      long started = System.nanoTime();
      String answer = readUntilClosed(s, BODY_SECONDS + 5);
      assertThat(elapsedMillis(started))
          .isBetween(BODY_SECONDS * 1000L - 500, BODY_SECONDS * 1000L + 3000);
      assertThat(answer).startsWith("HTTP/1.1 408");
      JsonObject error = body(answer);
      assertThat(error.getString("code")).isEqualTo("RequestTimeout");
      assertThat(error.getString("message")).isNotBlank();
      assertThat(error.getString("requestId")).isNotBlank();
    }
  }

  @Test
  void anIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout() throws Exception {
    try (Socket s = connect()) {
      send(s, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      assertThat(readResponse(s)).startsWith("HTTP/1.1 200");
      long started = System.nanoTime();
      assertThat(readUntilClosed(s, IDLE_SECONDS + 5)).isEmpty();
      assertThat(elapsedMillis(started))
          .isBetween(IDLE_SECONDS * 1000L - 500, IDLE_SECONDS * 1000L + 3000);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"api", "management"})
  void connectionsFromOneAddressBeyondItsCapAreClosedAtOnceWhileOtherAddressesAreServed(String port)
      throws Exception {
    awaitNoOtherConnections(port);
    long refused = RawHttp.refusedConnections(fx.api.metricsPort(), port);
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < CAP_PER_ADDRESS; i++) {
        held.add(connectFrom(port, "127.0.0.2"));
      }
      assertClosedAtOnce(connectFrom(port, "127.0.0.2"));
      assertServed(connectFrom(port, "127.0.0.3"));
      assertServedKeptOpen(held.get(0));
    } finally {
      closeAll(held);
    }
    awaitNoOtherConnections(port);
    assertThat(RawHttp.refusedConnections(fx.api.metricsPort(), port)).isEqualTo(refused + 1);
    assertServed(connectFrom(port, "127.0.0.2")); // the closed ones no longer count
  }

  @ParameterizedTest
  @ValueSource(strings = {"api", "management"})
  void connectionsBeyondTheTotalCapAreClosedAtOnceWhileTheOthersAreServed(String port)
      throws Exception {
    awaitNoOtherConnections(port);
    List<Socket> held = new ArrayList<>();
    try {
      held.add(connectFrom(port, "127.0.1.1"));
      if ("management".equals(port)) {
        // The connection that asked above may not be closed yet; this one asks until it is alone.
        Await.until(
            "the held connection alone", () -> openConnections(held.get(0), "management") == 1);
      }
      for (int i = 1; i < CAP; i++) {
        held.add(connectFrom(port, "127.0.1." + (i % 2 + 1))); // within each address's cap
      }
      assertClosedAtOnce(connectFrom(port, "127.0.1.3"));
      for (Socket s : held) {
        assertServedKeptOpen(s);
      }
    } finally {
      closeAll(held);
    }
    awaitNoOtherConnections(port);
    assertServed(connectFrom(port, "127.0.1.3"));
  }

  @Test
  void anExpectationOtherThan100ContinueIs417InTheErrorShapeWithoutAToken() throws Exception {
    try (Socket s = connect()) {
      send(
          s,
          "POST /v1/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: foo\r\nContent-Type: application/json\r\n"
              + "Content-Length: 2\r\nConnection: close\r\n\r\n{}");
      String answer = readUntilClosed(s, 5);
      assertThat(answer).as(answer).startsWith("HTTP/1.1 417");
      JsonObject error = body(answer);
      assertThat(error.getString("code")).isEqualTo("ExpectationFailed");
      assertThat(error.getString("requestId")).isNotBlank();
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a request line that is not HTTP | 400 | ValidationError",
        "a URL longer than the line limit | 414 | UriTooLong",
        "headers larger than the limit | 431 | HeadersTooLarge",
        "a header line without a colon | 400 | ValidationError",
        "an HTTP/1.1 request without Host | 400 | ValidationError",
        "an HTTP version that does not exist | 505 | HttpVersionNotSupported",
        "a protocol that is not HTTP | 505 | HttpVersionNotSupported",
        "the HTTP/2 preface on the plain port | 505 | HttpVersionNotSupported",
      })
  void requestsVertxRefusesByItselfAreRefusedInTheErrorShapeOnBothPorts(
      String what, int status, String code) throws Exception {
    String request =
        switch (what) {
          case "a request line that is not HTTP" -> "HELLO\r\n\r\n";
          case "a URL longer than the line limit" ->
              "GET /v1/machines?x=" + "a".repeat(5000) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
          case "headers larger than the limit" ->
              "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + "a".repeat(9000) + "\r\n\r\n";
          case "a header line without a colon" ->
              "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n";
          case "an HTTP version that does not exist" ->
              "GET /healthz HTTP/1.2\r\nHost: 127.0.0.1\r\n\r\n";
          case "a protocol that is not HTTP" -> "GET /healthz FOO/1.1\r\nHost: 127.0.0.1\r\n\r\n";
          case "the HTTP/2 preface on the plain port" -> "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
          default ->
              "GET /v1/machines HTTP/1.1\r\nAuthorization: Bearer "
                  + ApiFixture.ADMIN
                  + "\r\n"
                  + "Connection: close\r\n\r\n";
        };
    for (String port : List.of("api", "management")) {
      try (Socket s = connectFrom(port, "127.0.0.1")) {
        send(s, request);
        String answer = readUntilClosed(s, 5);
        assertThat(answer)
            .as(port + ": " + answer)
            .matches("(?s)HTTP/1\\.[01] " + status + " .*"); // 1.0 if the line was not 1.1
        JsonObject error = body(answer);
        assertThat(error.getString("code")).isEqualTo(code);
        assertThat(error.getString("requestId")).isNotBlank();
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "/v1/machines?labelSelector=%ff",
        "/v1/machines/%ff",
        "/v1/instances/%c3%28",
        "/v1/events?since=%e2%82",
        "/v1/shapes/%ff%fe"
      })
  void escapesThatAreNotUtf8AreAClientErrorNeverA500(String url) throws Exception {
    try (Socket s = connect()) {
      send(
          s,
          "GET "
              + url
              + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
              + ApiFixture.ADMIN
              + "\r\nConnection: close\r\n\r\n");
      String answer = readUntilClosed(s, 5);
      assertThat(answer).as(answer).matches("(?s)HTTP/1.1 4\\d\\d .*");
      assertThat(body(answer).getString("code")).isNotBlank();
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "/v1/machines?labelSelector=%zz       | labelSelector",
        "/v1/machines?limit=1&labelSelector=a%2 | labelSelector",
        "/v1/machines/%zz                     | path",
        "/v1/machines/m-%                     | path",
        "/v1/instances/%zz?state=running      | path",
      })
  void malformedEscapesAnywhereInTheUrlAre400NamingTheProblem(String url, String field)
      throws Exception {
    try (Socket s = connect()) {
      send(
          s,
          "GET "
              + url
              + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
              + ApiFixture.ADMIN
              + "\r\nConnection: close\r\n\r\n");
      String answer = readUntilClosed(s, 5);
      assertThat(answer).as(answer).startsWith("HTTP/1.1 400");
      JsonObject error = body(answer);
      assertThat(error.getString("code")).isEqualTo("ValidationError");
      assertThat(error.getString("field")).isEqualTo(field);
      assertThat(error.getString("message")).contains("%-escape");
      assertThat(error.getString("requestId")).isNotBlank();
    }
  }

  @Test
  void aMalformedEscapeWithABodyIs400AndTheUnreadBodyEndsTheConnection() throws Exception {
    try (Socket s = connect()) {
      send(
          s,
          "POST /v1/machines/%zz/cordon HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              + "Content-Length: 2\r\n\r\n{}");
      String answer = readUntilClosed(s, 5);
      assertThat(answer).as(answer).startsWith("HTTP/1.1 400");
      assertThat(body(answer).getString("field")).isEqualTo("path");
    }
  }

  @Test
  void aClientGoneMidBodyLeavesNoErrorInTheLog() throws Exception {
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    logged.start();
    root.addAppender(logged);
    try {
      try (Socket s = connect()) {
        send(
            s,
            "POST /v1/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                + ApiFixture.ADMIN
                + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"shape\":");
        Thread.sleep(200);
      }
      Thread.sleep(BODY_SECONDS * 1000L + 500); // past the body timer too
      assertThat(logged.list)
          .as(logged.list.toString())
          .noneMatch(
              e -> e.getLevel().isGreaterOrEqual(Level.WARN) || e.getThrowableProxy() != null);
    } finally {
      root.detachAppender(logged);
    }
  }

  /**
   * The other tests' connections to the port are gone. On the management port the connection asking
   * is one, and until the port has seen the closes it may itself be refused (unanswered).
   */
  private static void awaitNoOtherConnections(String port) throws InterruptedException {
    int asking = "management".equals(port) ? 1 : 0;
    Await.until(
        "no other connections open",
        () -> {
          try {
            return RawHttp.openConnections(fx.api.metricsPort(), port) == asking;
          } catch (AssertionError refusedWhileFull) {
            return false;
          }
        });
  }

  private static int openConnections(Socket keptOpen, String port) {
    try {
      return RawHttp.openConnections(keptOpen, port);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void assertServed(Socket s) throws IOException {
    try (s) {
      send(s, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
      assertThat(readUntilClosed(s, 5)).startsWith("HTTP/1.1 200");
    }
  }

  private static void assertServedKeptOpen(Socket s) throws IOException {
    send(s, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    assertThat(readResponse(s)).startsWith("HTTP/1.1 200");
  }
}
