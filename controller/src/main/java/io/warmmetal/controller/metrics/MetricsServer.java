package io.warmmetal.controller.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;

/**
 * The controller's HTTP endpoint: {@code /metrics} (Prometheus text), {@code /healthz} (the process
 * answers) and {@code /readyz} (this replica leads, or stands by ready to). The JDK's own server on
 * one thread: a scrape is a string render.
 */
public final class MetricsServer implements AutoCloseable {
  private final HttpServer server;

  private MetricsServer(HttpServer server) {
    this.server = server;
  }

  public static MetricsServer start(
      String host, int port, KarpenterMetrics metrics, BooleanSupplier ready) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 0);
    server.createContext(
        "/metrics",
        ex -> respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.scrape()));
    server.createContext("/healthz", ex -> respond(ex, 200, "text/plain", "ok\n"));
    server.createContext(
        "/readyz",
        ex ->
            respond(
                ex,
                ready.getAsBoolean() ? 200 : 503,
                "text/plain",
                ready.getAsBoolean() ? "ok\n" : "not ready\n"));
    server.start();
    return new MetricsServer(server);
  }

  public int port() {
    return server.getAddress().getPort();
  }

  private static void respond(HttpExchange ex, int status, String type, String body)
      throws IOException {
    try (ex) {
      if (!"GET".equals(ex.getRequestMethod()) && !"HEAD".equals(ex.getRequestMethod())) {
        ex.sendResponseHeaders(405, -1);
        return;
      }
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", type);
      ex.sendResponseHeaders(status, "HEAD".equals(ex.getRequestMethod()) ? -1 : bytes.length);
      if (!"HEAD".equals(ex.getRequestMethod())) {
        try (OutputStream out = ex.getResponseBody()) {
          out.write(bytes);
        }
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
