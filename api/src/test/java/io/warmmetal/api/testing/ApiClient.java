package io.warmmetal.api.testing;

import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.contract.Operation;
import io.vertx.openapi.validation.ResponseValidator;
import io.vertx.openapi.validation.ValidatableResponse;
import java.util.HashMap;
import java.util.Map;

/**
 * An HTTP client for the API that checks every response of a contract operation against
 * openapi.yaml: a response the contract does not allow fails the test.
 */
public final class ApiClient {
  private final WebClient http;
  private final int port;
  private final OpenAPIContract contract;
  private final ResponseValidator validator;
  private final String project;

  public ApiClient(Vertx vertx, int port, OpenAPIContract contract) {
    // Idle connections kept for less than the server's idle timeout, so none is reused just as the
    // server closes it.
    this(
        WebClient.create(
            vertx,
            new WebClientOptions().setKeepAlive(true).setKeepAliveTimeout(30),
            new PoolOptions().setHttp1MaxSize(600)),
        port,
        contract,
        ResponseValidator.create(vertx, contract),
        null);
  }

  private ApiClient(
      WebClient http,
      int port,
      OpenAPIContract contract,
      ResponseValidator validator,
      String project) {
    this.http = http;
    this.port = port;
    this.contract = contract;
    this.validator = validator;
    this.project = project;
  }

  /**
   * This client naming {@code project} in the {@code WarmMetal-Project} header of every request.
   */
  public ApiClient inProject(String project) {
    return new ApiClient(http, port, contract, validator, project);
  }

  /** A response: status, body (JSON, or null when empty), headers. */
  public record Response(int status, JsonObject body, MultiMap headers, String raw) {
    public String errorCode() {
      return body == null ? null : body.getString("code");
    }
  }

  public Future<Response> send(HttpMethod method, String pathAndQuery, String token, Object body) {
    var request = http.request(method, port, "127.0.0.1", pathAndQuery);
    if (token != null) {
      request.putHeader("Authorization", "Bearer " + token);
    }
    if (project != null) {
      request.putHeader("WarmMetal-Project", project);
    }
    Future<HttpResponse<Buffer>> sent;
    if (body == null) {
      sent = request.send();
    } else if (body instanceof String raw) {
      sent = request.putHeader("Content-Type", "application/json").sendBuffer(Buffer.buffer(raw));
    } else {
      sent = request.sendJsonObject((JsonObject) body);
    }
    return sent.compose(
        resp -> checkContract(method, pathAndQuery, resp).map(x -> toResponse(resp)));
  }

  public Response call(HttpMethod method, String pathAndQuery, String token, Object body) {
    return send(method, pathAndQuery, token, body).await();
  }

  public Response get(String path, String token) {
    return call(HttpMethod.GET, path, token, null);
  }

  public Response post(String path, String token, Object body) {
    return call(HttpMethod.POST, path, token, body);
  }

  public Response put(String path, String token, Object body) {
    return call(HttpMethod.PUT, path, token, body);
  }

  public Response delete(String path, String token) {
    return call(HttpMethod.DELETE, path, token, null);
  }

  private Future<Void> checkContract(
      HttpMethod method, String pathAndQuery, HttpResponse<Buffer> resp) {
    String path =
        pathAndQuery.contains("?")
            ? pathAndQuery.substring(0, pathAndQuery.indexOf('?'))
            : pathAndQuery;
    Operation op = path.startsWith("/v1/") ? contract.findOperation(path, method) : null;
    if (op == null) {
      return Future.succeededFuture(); // not a contract operation (health, metrics, 404s)
    }
    Map<String, String> headers = new HashMap<>();
    resp.headers().forEach(h -> headers.put(h.getKey(), h.getValue()));
    ValidatableResponse validatable =
        resp.body() == null || resp.body().length() == 0
            ? ValidatableResponse.create(resp.statusCode(), headers)
            : ValidatableResponse.create(
                resp.statusCode(), headers, resp.body(), resp.getHeader("Content-Type"));
    return validator
        .validate(validatable, op.getOperationId())
        .<Void>mapEmpty()
        .recover(
            err ->
                Future.failedFuture(
                    new AssertionError(
                        method
                            + " "
                            + pathAndQuery
                            + " answered "
                            + resp.statusCode()
                            + " outside the contract ("
                            + op.getOperationId()
                            + "): "
                            + err.getMessage()
                            + "\n"
                            + resp.bodyAsString())));
  }

  private static Response toResponse(HttpResponse<Buffer> resp) {
    String raw = resp.bodyAsString();
    JsonObject json = null;
    if (raw != null && !raw.isEmpty() && raw.startsWith("{")) {
      json = new JsonObject(raw);
    }
    return new Response(resp.statusCode(), json, resp.headers(), raw);
  }
}
