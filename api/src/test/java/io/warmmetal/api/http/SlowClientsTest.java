package io.warmmetal.api.http;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.LoggerFactory;

/**
 * The API port against slow and piled-up clients, with real sockets: stalled headers and bodies are cut off, idle
 * connections closed, connections beyond the cap refused, URLs with malformed escapes answered 400.
 */
@ExtendWith(VertxExtension.class)
class SlowClientsTest {
  private static final int HEADER_SECONDS = 2;
  private static final int BODY_SECONDS = 1;
  private static final int IDLE_SECONDS = 3;
  private static final int CAP = 6;

  private static ApiFixture fx;

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx, Map.of(
        "WARMMETAL_HTTP_HEADER_TIMEOUT_SECONDS", Integer.toString(HEADER_SECONDS),
        "WARMMETAL_HTTP_BODY_TIMEOUT_SECONDS", Integer.toString(BODY_SECONDS),
        "WARMMETAL_HTTP_IDLE_TIMEOUT_SECONDS", Integer.toString(IDLE_SECONDS),
        "WARMMETAL_HTTP_MAX_CONNECTIONS", Integer.toString(CAP)));
  }

  @AfterAll
  static void stop() {
    fx.close();
  }

  @Test
  void aClientThatSendsHalfItsHeadersThenStallsIsDisconnected() throws Exception {
    try (Socket s = connect()) {
      send(s, "GET /v1/machines HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ");
      long started = System.nanoTime();
      assertThat(readUntilClosed(s, HEADER_SECONDS + 5)).as("nothing answered").isEmpty();
      assertThat(elapsedMillis(started)).isBetween(HEADER_SECONDS * 1000L - 500, HEADER_SECONDS * 1000L + 3000);
    }
  }

  @Test
  void aClientTricklingItsHeadersIsDisconnectedAtTheHeaderTimeout() throws Exception {
    // A byte every 300 ms keeps the idle timeout from firing: only the header timeout ends this.
    try (Socket s = connect()) {
      send(s, "GET /v1/machines HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      long started = System.nanoTime();
      boolean closed = false;
      while (!closed && elapsedMillis(started) < (HEADER_SECONDS + 5) * 1000L) {
        try {
          send(s, "a");
          closed = s.getInputStream().read() < 0;
        } catch (SocketTimeoutException stillOpen) {
          Thread.sleep(200);
        } catch (IOException reset) {
          closed = true;
        }
      }
      assertThat(closed).as("disconnected").isTrue();
      assertThat(elapsedMillis(started)).isBetween(HEADER_SECONDS * 1000L - 500, HEADER_SECONDS * 1000L + 1500);
    }
  }

  @Test
  void aBodyThatStallsMidwayIsAnswered408AndTheConnectionClosed() throws Exception {
    try (Socket s = connect()) {
      send(s, "POST /v1/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + ApiFixture.ADMIN
          + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"shape\":");
      long started = System.nanoTime();
      String answer = readUntilClosed(s, BODY_SECONDS + 5);
      assertThat(elapsedMillis(started)).isBetween(BODY_SECONDS * 1000L - 500, BODY_SECONDS * 1000L + 3000);
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
      assertThat(elapsedMillis(started)).isBetween(IDLE_SECONDS * 1000L - 500, IDLE_SECONDS * 1000L + 3000);
    }
  }

  @Test
  void connectionsBeyondTheCapAreClosedAtOnce() throws Exception {
    Thread.sleep(300); // the other tests' connections are gone
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < CAP; i++) {
        held.add(connect());
      }
      Thread.sleep(300); // every accept handled
      try (Socket beyond = connect()) {
        long started = System.nanoTime();
        assertThat(readUntilClosed(beyond, 5)).isEmpty();
        assertThat(elapsedMillis(started)).as("closed at once").isLessThan(1000);
      }
      // Those within the cap are served.
      send(held.get(0), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      assertThat(readResponse(held.get(0))).startsWith("HTTP/1.1 200");
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
    Thread.sleep(300);
    try (Socket again = connect()) { // closed ones no longer count
      send(again, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
      assertThat(readUntilClosed(again, 5)).startsWith("HTTP/1.1 200");
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {"/v1/machines?labelSelector=%ff", "/v1/machines/%ff", "/v1/instances/%c3%28",
      "/v1/events?since=%e2%82", "/v1/shapes/%ff%fe"})
  void escapesThatAreNotUtf8AreAClientErrorNeverA500(String url) throws Exception {
    try (Socket s = connect()) {
      send(s, "GET " + url + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + ApiFixture.ADMIN
          + "\r\nConnection: close\r\n\r\n");
      String answer = readUntilClosed(s, 5);
      assertThat(answer).as(answer).matches("(?s)HTTP/1.1 4\\d\\d .*");
      assertThat(body(answer).getString("code")).isNotBlank();
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "/v1/machines?labelSelector=%zz       | labelSelector",
      "/v1/machines?limit=1&labelSelector=a%2 | labelSelector",
      "/v1/machines/%zz                     | path",
      "/v1/machines/m-%                     | path",
      "/v1/instances/%zz?state=running      | path",
  })
  void malformedEscapesAnywhereInTheUrlAre400NamingTheProblem(String url, String field) throws Exception {
    try (Socket s = connect()) {
      send(s, "GET " + url + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + ApiFixture.ADMIN
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
      send(s, "POST /v1/machines/%zz/cordon HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
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
        send(s, "POST /v1/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + ApiFixture.ADMIN
            + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"shape\":");
        Thread.sleep(200);
      }
      Thread.sleep(BODY_SECONDS * 1000L + 500); // past the body timer too
      assertThat(logged.list).as(logged.list.toString())
          .noneMatch(e -> e.getLevel().isGreaterOrEqual(Level.WARN) || e.getThrowableProxy() != null);
    } finally {
      root.detachAppender(logged);
    }
  }

  private static Socket connect() throws IOException {
    Socket s = new Socket("127.0.0.1", fx.api.port());
    s.setSoTimeout(100);
    return s;
  }

  private static void send(Socket s, String text) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(text.getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  /** Everything the server sends until it closes the connection; fails if it is still open after the limit. */
  private static String readUntilClosed(Socket s, int limitSeconds) throws IOException {
    long deadline = System.nanoTime() + limitSeconds * 1_000_000_000L;
    InputStream in = s.getInputStream();
    StringBuilder text = new StringBuilder();
    byte[] buf = new byte[4096];
    while (System.nanoTime() < deadline) {
      int n;
      try {
        n = in.read(buf);
      } catch (SocketTimeoutException stillOpen) {
        continue;
      } catch (IOException reset) {
        return text.toString();
      }
      if (n < 0) {
        return text.toString();
      }
      text.append(new String(buf, 0, n, StandardCharsets.UTF_8));
    }
    throw new AssertionError("the connection is still open after " + limitSeconds + "s; read: " + text);
  }

  /** One response with a Content-Length, the connection left open. */
  private static String readResponse(Socket s) throws IOException {
    long deadline = System.nanoTime() + 5_000_000_000L;
    InputStream in = s.getInputStream();
    StringBuilder text = new StringBuilder();
    byte[] buf = new byte[4096];
    while (System.nanoTime() < deadline) {
      int headersEnd = text.indexOf("\r\n\r\n");
      if (headersEnd >= 0) {
        var m = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(text);
        if (m.find() && text.length() >= headersEnd + 4 + Integer.parseInt(m.group(1))) {
          return text.toString();
        }
      }
      try {
        int n = in.read(buf);
        if (n < 0) {
          break;
        }
        text.append(new String(buf, 0, n, StandardCharsets.UTF_8));
      } catch (SocketTimeoutException notYet) {
        // read on
      }
    }
    throw new AssertionError("no complete response: " + text);
  }

  private static JsonObject body(String response) {
    return new JsonObject(response.substring(response.indexOf("\r\n\r\n") + 4).trim());
  }

  private static long elapsedMillis(long startedNanos) {
    return (System.nanoTime() - startedNanos) / 1_000_000;
  }
}
