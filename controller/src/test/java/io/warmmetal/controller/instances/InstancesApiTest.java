package io.warmmetal.controller.instances;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.api.model.Quantity;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.cloudprovider.CloudProviderException.InsufficientCapacity;
import io.warmmetal.controller.cloudprovider.CloudProviderException.NotFound;
import io.warmmetal.controller.cloudprovider.CloudProviderException.QuotaExceeded;
import io.warmmetal.controller.cloudprovider.CloudProviderException.Rejected;
import io.warmmetal.controller.cloudprovider.CloudProviderException.Unavailable;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How each answer of the instances API becomes a typed error: by the error shape's code first (both
 * InsufficientCapacity and ServiceUnavailable are 503s — only the first is about capacity), then by
 * status; a proxy's page or a refused connection is an outage. The answers come from a loopback
 * server replaying the API's error shape; the real API's own answers are tested in e2e's
 * InstancesApiErrorsTest.
 */
class InstancesApiTest {
  private HttpServer server;
  private volatile int status;
  private volatile String body;
  private volatile Map<String, String> headers = Map.of();

  @BeforeEach
  void start() throws Exception {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/",
        exchange -> {
          headers.forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
          byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
          exchange.getResponseBody().write(bytes);
          exchange.close();
        });
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  private CloudProviderException answer(int status, String body, Map<String, String> headers) {
    this.status = status;
    this.body = body;
    this.headers = headers;
    InstancesApi api =
        new InstancesApi(URI.create("http://127.0.0.1:" + server.getAddress().getPort()), "token");
    return (CloudProviderException)
        catchThrowable(() -> api.launch(InstancesApi.object().put("clientToken", "t")));
  }

  private static String error(String code, String field) {
    return "{\"code\":\""
        + code
        + "\",\"message\":\"m\""
        + (field == null ? "" : ",\"field\":\"" + field + "\"")
        + "}";
  }

  @Test
  void aMachinesFactsAreTheCapacityItsNodeShouldReport() throws Exception {
    JsonNode facts =
        new ObjectMapper()
            .readTree(
                "{\"cpus\": 16, \"memoryMiB\": 65536, \"arch\": \"x86_64\","
                    + " \"gpus\": [{\"model\": \"L4\"}, {\"model\": \"L4\"}]}");
    assertThat(InstancesApi.capacity(facts))
        .isEqualTo(
            Map.of(
                "cpu", new Quantity("16"),
                "memory", new Quantity("65536Mi"),
                "nvidia.com/gpu", new Quantity("2")));
    assertThat(InstancesApi.capacity(new ObjectMapper().readTree("{}"))).isEmpty();
  }

  @Test
  void anOutageIsUnavailableWithItsRetryAfterAndNeverNoCapacity() {
    CloudProviderException outage =
        answer(503, error("ServiceUnavailable", null), Map.of("Retry-After", "3"));
    assertThat(outage).isInstanceOf(Unavailable.class);
    assertThat(((Unavailable) outage).retryAfter()).isEqualTo(Duration.ofSeconds(3));

    assertThat(answer(503, error("InsufficientCapacity", null), Map.of()))
        .isInstanceOf(InsufficientCapacity.class);
    assertThat(answer(502, "<html>bad gateway</html>", Map.of()))
        .isInstanceOfSatisfying(
            Unavailable.class,
            e -> assertThat(e.retryAfter()).isEqualTo(InstancesApi.DEFAULT_RETRY_AFTER));
    assertThat(answer(429, error("TooManyRequests", null), Map.of("Retry-After", "7")))
        .isInstanceOfSatisfying(
            Unavailable.class, e -> assertThat(e.retryAfter()).isEqualTo(Duration.ofSeconds(7)));
    assertThat(answer(500, error("InternalError", null), Map.of())).isInstanceOf(Unavailable.class);
  }

  @Test
  void quotasMissingShapesAndRefusalsAreTyped() {
    assertThat(answer(403, error("QuotaExceeded", null), Map.of()))
        .isInstanceOf(QuotaExceeded.class);
    assertThat(answer(400, error("ValidationError", "shapes"), Map.of()))
        .as("shapes no longer offered: none to be had")
        .isInstanceOf(InsufficientCapacity.class);
    assertThat(answer(400, error("ValidationError", "labels"), Map.of()))
        .isInstanceOfSatisfying(
            Rejected.class, e -> assertThat(e.code()).isEqualTo("ValidationError"));
    assertThat(answer(401, error("Unauthorized", null), Map.of())).isInstanceOf(Rejected.class);
    assertThat(answer(404, error("NotFound", null), Map.of())).isInstanceOf(NotFound.class);
  }

  @Test
  void aRefusedConnectionIsUnavailable() throws Exception {
    int closed;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closed = socket.getLocalPort();
    }
    InstancesApi api = new InstancesApi(URI.create("http://127.0.0.1:" + closed), "token");
    assertThat(catchThrowable(() -> api.terminate("i-1"))).isInstanceOf(Unavailable.class);
  }
}
