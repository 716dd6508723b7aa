package io.warmmetal.controller.instances;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Quantity;
import io.vertx.core.json.JsonObject;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.cloudprovider.CloudProviderException.InsufficientCapacity;
import io.warmmetal.controller.cloudprovider.CloudProviderException.NotFound;
import io.warmmetal.controller.cloudprovider.CloudProviderException.QuotaExceeded;
import io.warmmetal.controller.cloudprovider.CloudProviderException.Rejected;
import io.warmmetal.controller.cloudprovider.CloudProviderException.Unavailable;
import io.warmmetal.controller.cloudprovider.Instance;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The WarmMetal instances API over HTTP: shapes with their live counts, launches (idempotent by
 * client token), listings and terminations. Blocking. Each error answer becomes a typed {@link
 * CloudProviderException} chosen by the error shape's stable {@code code}; a connection that fails
 * is {@link Unavailable}, as an outage answered 503 is.
 */
public final class InstancesApi {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** How long to wait before asking again when the answer does not say (no Retry-After). */
  static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);

  // HTTP/1.1: the API speaks it, and the JDK's default (an h2c upgrade attempt) only adds to a
  // launch's time.
  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();
  private final URI endpoint;
  private final String token;

  public InstancesApi(URI endpoint, String token) {
    this.endpoint = endpoint;
    this.token = token;
  }

  /**
   * Whether this client speaks with {@code candidate} (compared in constant time: it is a secret).
   */
  public boolean usesToken(String candidate) {
    return MessageDigest.isEqual(
        token.getBytes(StandardCharsets.UTF_8), candidate.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * The shapes, their offerings grouped by the values of these machine label keys (zone, region).
   */
  public JsonNode shapes(String zoneLabel, String regionLabel)
      throws CloudProviderException, InterruptedException {
    return send(
            "GET",
            "/v1/shapes?zoneLabel="
                + URLEncoder.encode(zoneLabel, StandardCharsets.UTF_8)
                + "&regionLabel="
                + URLEncoder.encode(regionLabel, StandardCharsets.UTF_8),
            null)
        .get("items");
  }

  /** One machine's labels and the node image it booted (null when its facts do not say). */
  /**
   * A machine as a launch records it: its labels, the node image it booted, and what its facts say
   * it has (its cores, memory and GPUs: the capacity its Node should report).
   */
  public record Machine(
      Map<String, String> labels, String imageVersion, Map<String, Quantity> capacity) {}

  public Machine machine(String id) throws CloudProviderException, InterruptedException {
    JsonNode machine =
        send("GET", "/v1/machines/" + URLEncoder.encode(id, StandardCharsets.UTF_8), null);
    JsonNode facts = machine.path("facts");
    return new Machine(
        labels(machine.path("labels")),
        facts.path("image").path("version").asText(null),
        capacity(facts));
  }

  /** What the facts say the machine has, as a Node reports it (none where they say nothing). */
  static Map<String, Quantity> capacity(JsonNode facts) {
    Map<String, Quantity> capacity = new HashMap<>();
    if (facts.path("cpus").canConvertToLong()) {
      capacity.put("cpu", new Quantity(String.valueOf(facts.get("cpus").asLong())));
    }
    if (facts.path("memoryMiB").canConvertToLong()) {
      capacity.put("memory", new Quantity(facts.get("memoryMiB").asLong() + "Mi"));
    }
    if (facts.path("gpus").isArray() && !facts.get("gpus").isEmpty()) {
      capacity.put("nvidia.com/gpu", new Quantity(String.valueOf(facts.get("gpus").size())));
    }
    return capacity;
  }

  /** Launches one instance; the same client token always yields the same instance. */
  public Instance launch(ObjectNode request) throws CloudProviderException, InterruptedException {
    return instance(send("POST", "/v1/instances", request).get("instances").get(0));
  }

  /**
   * Every instance matching the label selector ({@code k=v}, {@code k}, …), in {@code state} if not
   * null; all pages.
   */
  public List<Instance> selected(String labelSelector, String state)
      throws CloudProviderException, InterruptedException {
    List<Instance> all = new ArrayList<>();
    String cursor = null;
    do {
      String query =
          "/v1/instances?limit=500"
              + (state == null ? "" : "&state=" + state)
              + "&labelSelector="
              + URLEncoder.encode(labelSelector, StandardCharsets.UTF_8)
              + (cursor == null
                  ? ""
                  : "&cursor=" + URLEncoder.encode(cursor, StandardCharsets.UTF_8));
      JsonNode page = send("GET", query, null);
      page.get("items").forEach(i -> all.add(instance(i)));
      cursor = page.path("nextCursor").isTextual() ? page.get("nextCursor").asText() : null;
    } while (cursor != null);
    return all;
  }

  public void terminate(String instanceId) throws CloudProviderException, InterruptedException {
    send("DELETE", "/v1/instances/" + URLEncoder.encode(instanceId, StandardCharsets.UTF_8), null);
  }

  public static ObjectNode object() {
    return JSON.createObjectNode();
  }

  /** A protocol record's JSON (Vert.x's) as a tree to put in a request. */
  public static JsonNode tree(JsonObject json) {
    try {
      return JSON.readTree(json.encode());
    } catch (IOException e) {
      throw new IllegalArgumentException("not JSON", e);
    }
  }

  private static Instance instance(JsonNode i) {
    return new Instance(
        i.get("id").asText(),
        i.path("shape").asText(null),
        i.path("machineId").asText(null),
        i.path("providerId").asText(null),
        i.path("state").asText(null),
        labels(i.path("labels")),
        i.path("standby").asBoolean(false),
        i.path("preJoined").asBoolean(false),
        instant(i.path("createdAt")),
        instant(i.path("runningAt")));
  }

  private static Instant instant(JsonNode text) {
    return text.isTextual() ? Instant.parse(text.asText()) : null;
  }

  private static Map<String, String> labels(JsonNode labels) {
    Map<String, String> map = new HashMap<>();
    labels.fields().forEachRemaining(e -> map.put(e.getKey(), e.getValue().asText()));
    return Map.copyOf(map);
  }

  private JsonNode send(String method, String path, JsonNode body)
      throws CloudProviderException, InterruptedException {
    HttpResponse<String> response;
    try {
      HttpRequest.Builder request =
          HttpRequest.newBuilder(endpoint.resolve(path))
              .timeout(Duration.ofSeconds(30))
              .header("Authorization", "Bearer " + token)
              .header("Content-Type", "application/json")
              .method(
                  method,
                  body == null
                      ? HttpRequest.BodyPublishers.noBody()
                      : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      // Refused, reset, timed out: the fleet did not answer, which says nothing about capacity.
      throw new Unavailable(
          method + " " + endpoint.resolve(path).getPath() + ": " + e, DEFAULT_RETRY_AFTER);
    }
    JsonNode json = parse(response.body());
    if (response.statusCode() >= 400) {
      throw error(response, json);
    }
    if (json == null) {
      throw new Unavailable(
          "the instances API answered " + response.statusCode() + " with no JSON",
          DEFAULT_RETRY_AFTER);
    }
    return json;
  }

  private static JsonNode parse(String body) {
    if (body.isEmpty()) {
      return JSON.createObjectNode();
    }
    try {
      return JSON.readTree(body);
    } catch (JsonProcessingException notJson) {
      return null; // a proxy's error page: the status decides
    }
  }

  /** The typed error for an error answer: by its code, else by its status. */
  static CloudProviderException error(HttpResponse<?> response, JsonNode json) {
    int status = response.statusCode();
    String code = json == null ? "" : json.path("code").asText("");
    String field = json == null ? null : json.path("field").asText(null);
    String message =
        status + " " + code + ": " + (json == null ? "" : json.path("message").asText(""));
    if ("InsufficientCapacity".equals(code)
        || (status == 400 && ("shape".equals(field) || "shapes".equals(field)))) {
      // Shapes no longer offered — deleted since the plan, or closed to the project by a quota of
      // 0, which the API answers as if they did not exist — are none to be had, as upstream's
      // providers report them.
      return new InsufficientCapacity(message);
    }
    if ("QuotaExceeded".equals(code)) {
      return new QuotaExceeded(message);
    }
    if (status == 404) {
      return new NotFound(message);
    }
    if (status >= 500 || status == 429 || status == 408) {
      return new Unavailable(message, retryAfter(response));
    }
    return new Rejected(code, message);
  }

  private static Duration retryAfter(HttpResponse<?> response) {
    return response
        .headers()
        .firstValue("Retry-After")
        .flatMap(
            v -> {
              try {
                return Optional.of(Duration.ofSeconds(Math.max(0, Long.parseLong(v))));
              } catch (NumberFormatException httpDate) {
                return Optional.empty();
              }
            })
        .orElse(DEFAULT_RETRY_AFTER);
  }
}
