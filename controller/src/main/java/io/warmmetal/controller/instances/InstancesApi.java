package io.warmmetal.controller.instances;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The WarmMetal instances API as the controller uses it: shapes with their live counts, launches
 * (idempotent by client token) and terminations. Blocking; called from the controller's reconcile
 * thread.
 */
public final class InstancesApi {
  private static final ObjectMapper JSON = new ObjectMapper();

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

  /** An error answer of the API: its status and stable code. */
  public static final class ApiException extends IOException {
    private final int status;
    private final String code;
    private final String field;

    ApiException(int status, String code, String message, String field) {
      super(status + " " + code + ": " + message);
      this.status = status;
      this.code = code;
      this.field = field;
    }

    public int status() {
      return status;
    }

    public String code() {
      return code;
    }

    /** The input the API named as the problem, or null. */
    public String field() {
      return field;
    }

    /**
     * Whether the launch named only shapes the API does not offer this project (any more): deleted
     * since the plan, or closed to it by a quota of 0, which the API answers the same way so as not
     * to tell the project it exists.
     */
    public boolean noSuchShape() {
      return status == 400 && ("shape".equals(field) || "shapes".equals(field));
    }
  }

  public JsonNode shapes() throws IOException, InterruptedException {
    return send("GET", "/v1/shapes", null).get("items");
  }

  /**
   * The shapes, their offerings grouped by the values of these machine label keys (zone, region).
   */
  public JsonNode shapes(String zoneLabel, String regionLabel)
      throws IOException, InterruptedException {
    return send(
            "GET",
            "/v1/shapes?zoneLabel="
                + URLEncoder.encode(zoneLabel, StandardCharsets.UTF_8)
                + "&regionLabel="
                + URLEncoder.encode(regionLabel, StandardCharsets.UTF_8),
            null)
        .get("items");
  }

  /** One machine (its labels say where it stands). */
  public JsonNode machine(String id) throws IOException, InterruptedException {
    return send("GET", "/v1/machines/" + URLEncoder.encode(id, StandardCharsets.UTF_8), null);
  }

  /** Launches one instance; the same client token always yields the same instance. */
  public JsonNode launch(ObjectNode request) throws IOException, InterruptedException {
    return send("POST", "/v1/instances", request).get("instances").get(0);
  }

  /**
   * Every instance matching the label selector ({@code k=v}, {@code k}, …), in {@code state} if not
   * null; all pages.
   */
  public List<JsonNode> selected(String labelSelector, String state)
      throws IOException, InterruptedException {
    List<JsonNode> all = new ArrayList<>();
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
      page.get("items").forEach(all::add);
      cursor = page.path("nextCursor").isTextual() ? page.get("nextCursor").asText() : null;
    } while (cursor != null);
    return all;
  }

  public JsonNode terminate(String instanceId) throws IOException, InterruptedException {
    return send("DELETE", "/v1/instances/" + instanceId, null);
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

  private JsonNode send(String method, String path, JsonNode body)
      throws IOException, InterruptedException {
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
    HttpResponse<String> response =
        http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    JsonNode json =
        response.body().isEmpty() ? JSON.createObjectNode() : JSON.readTree(response.body());
    if (response.statusCode() >= 400) {
      throw new ApiException(
          response.statusCode(),
          json.path("code").asText(),
          json.path("message").asText(),
          json.path("field").asText(null));
    }
    return json;
  }
}
