package io.warmmetal.cli.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;

/** The API over the JDK's HTTP client; blocking is fine in a command-line tool. */
public final class ApiClient {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private final URI base;
  private final String token;
  private final String project;
  private final HttpClient http;

  public ApiClient(String api, String token, String project, Path caFile) {
    this.base = URI.create(api.endsWith("/") ? api.substring(0, api.length() - 1) : api);
    if (!"http".equals(base.getScheme()) && !"https".equals(base.getScheme())) {
      throw new IllegalArgumentException("the API URL must be http:// or https://, not " + api);
    }
    this.token = token;
    this.project = project;
    HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10));
    if ("https".equals(base.getScheme()) || caFile != null) {
      builder.sslContext(Trust.context(caFile));
    }
    this.http = builder.build();
  }

  public URI base() {
    return base;
  }

  public JsonNode get(String path) {
    return send("GET", path, null);
  }

  public JsonNode post(String path, Object body) {
    return send("POST", path, body);
  }

  public JsonNode put(String path, Object body) {
    return send("PUT", path, body);
  }

  public JsonNode delete(String path) {
    return send("DELETE", path, null);
  }

  /** Every item of a paged list ({@code items}, {@code nextCursor}), oldest first. */
  public ArrayNode list(String path, Map<String, ?> params) {
    var all = JSON.createArrayNode();
    Map<String, Object> q = new LinkedHashMap<>(params);
    q.put("limit", 1000);
    while (true) {
      JsonNode page = get(query(path, q));
      page.path("items").forEach(all::add);
      JsonNode next = page.get("nextCursor");
      if (next == null || next.isNull() || page.path("items").isEmpty()) {
        return all;
      }
      q.put("cursor", next.asText());
    }
  }

  /** {@code path?k=v&…} with the null values left out and the rest encoded. */
  public static String query(String path, Map<String, ?> params) {
    StringJoiner q = new StringJoiner("&");
    params.forEach(
        (k, v) -> {
          if (v != null) {
            q.add(k + "=" + URLEncoder.encode(String.valueOf(v), StandardCharsets.UTF_8));
          }
        });
    return q.length() == 0 ? path : path + "?" + q;
  }

  private JsonNode send(String method, String path, Object body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(TIMEOUT)
            .header("Accept", "application/json")
            .header("User-Agent", "warmmetal-cli/0.1.0");
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    if (project != null) {
      request.header("WarmMetal-Project", project);
    }
    try {
      if (body == null) {
        request.method(method, HttpRequest.BodyPublishers.noBody());
      } else {
        request
            .header("Content-Type", "application/json")
            .method(method, HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)));
      }
      HttpResponse<byte[]> response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
      return answer(path, response);
    } catch (IOException e) {
      throw new ApiUnreachable("cannot reach the API at " + base + ": " + describe(e), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ApiUnreachable("interrupted", e);
    }
  }

  private JsonNode answer(String path, HttpResponse<byte[]> response) throws IOException {
    int status = response.statusCode();
    byte[] bytes = response.body();
    JsonNode body = NullNode.getInstance();
    if (bytes.length > 0) {
      try {
        body = JSON.readTree(bytes);
      } catch (IOException e) {
        if (status < 300) {
          throw e;
        }
      }
    }
    if (status >= 200 && status < 300) {
      return body;
    }
    Integer retryAfter =
        response.headers().firstValue("Retry-After").map(ApiClient::seconds).orElse(null);
    String code = body.path("code").asText("HTTP" + status);
    String message = body.path("message").asText("HTTP status " + status);
    String field = body.hasNonNull("field") ? body.get("field").asText() : null;
    if (field != null) {
      message += " (field " + field + ")";
    }
    throw new ApiException(
        status,
        code,
        message,
        new ApiException.Request(path, project),
        field,
        body.get("details"),
        retryAfter);
  }

  private static Integer seconds(String value) {
    try {
      return Integer.valueOf(value.trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** The first cause that says something; the JDK's ConnectException often says nothing. */
  private static String describe(IOException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t.getMessage() != null && !t.getMessage().isBlank()) {
        return t.getMessage();
      }
      if (t instanceof ConnectException) {
        return "connection refused";
      }
    }
    return e.getClass().getSimpleName();
  }
}
