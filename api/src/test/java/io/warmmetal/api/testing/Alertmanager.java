package io.warmmetal.api.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Debian's {@code prometheus-alertmanager} as a process on loopback (no cluster peer port), routing
 * every alert at once to a webhook this fixture serves, which keeps what it is sent.
 */
public final class Alertmanager implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpServer webhook;
  private final List<JsonNode> notifications;
  private HttpProcess process;

  private Alertmanager(HttpServer webhook, List<JsonNode> notifications) {
    this.webhook = webhook;
    this.notifications = notifications;
  }

  public static Alertmanager start(Path dir) throws IOException, InterruptedException {
    Path binary = RequiredTool.onPath("prometheus-alertmanager", "prometheus-alertmanager");
    List<JsonNode> notifications = new CopyOnWriteArrayList<>();
    HttpServer webhook =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    webhook.createContext(
        "/alerts",
        exchange -> {
          try (exchange;
              InputStream body = exchange.getRequestBody()) {
            notifications.add(JSON.readTree(body));
            exchange.sendResponseHeaders(200, -1);
          }
        });
    webhook.start();
    Alertmanager alertmanager = new Alertmanager(webhook, notifications);
    int port = ApiProcess.freePort();
    Files.writeString(
        dir.resolve("alertmanager.yml"),
        String.join(
            "\n",
            "route:",
            "  receiver: webhook",
            "  group_by: [alertname]",
            "  group_wait: 0s",
            "  group_interval: 1s",
            "  repeat_interval: 1h",
            "receivers:",
            "  - name: webhook",
            "    webhook_configs:",
            "      - url: http://127.0.0.1:" + webhook.getAddress().getPort() + "/alerts",
            "        send_resolved: true",
            ""));
    try {
      alertmanager.process =
          HttpProcess.start(
              List.of(
                  binary.toString(),
                  "--config.file=" + dir.resolve("alertmanager.yml"),
                  "--storage.path=" + dir.resolve("alertmanager-data"),
                  "--web.listen-address=127.0.0.1:" + port,
                  "--cluster.listen-address=", // no gossip port: one Alertmanager, loopback only
                  "--log.level=warn"),
              dir.resolve("alertmanager.log"),
              port,
              "/-/ready");
    } catch (IOException | AssertionError | InterruptedException e) {
      webhook.stop(0);
      throw e;
    }
    return alertmanager;
  }

  /** Where Prometheus sends alerts: {@code host:port}. */
  public String address() {
    return "127.0.0.1:" + process.port();
  }

  /** The alerts Alertmanager holds now ({@code /api/v2/alerts}). */
  public JsonNode alerts() throws IOException, InterruptedException {
    return JSON.readTree(process.get("/api/v2/alerts").body());
  }

  /** What the webhook receiver was sent, in order: Alertmanager's notification bodies. */
  public List<JsonNode> notifications() {
    return List.copyOf(notifications);
  }

  public String logTail() {
    return process.logTail();
  }

  @Override
  public void close() throws InterruptedException {
    try {
      process.close();
    } finally {
      webhook.stop(0);
    }
  }
}
