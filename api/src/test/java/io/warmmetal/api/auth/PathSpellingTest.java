package io.warmmetal.api.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Authentication cannot be side-stepped by spelling a path differently from the contract (trailing
 * or repeated slashes, dot segments, escaped letters): the router would still route such a request
 * to its operation.
 */
@ExtendWith(VertxExtension.class)
class PathSpellingTest {
  private static final List<String> SPELLINGS =
      List.of(
          "/v1/tokens/",
          "//v1/tokens",
          "/v1//tokens",
          "/v1/./tokens",
          "/v1/x/../tokens",
          "/v1/%74okens",
          "/v1/tokens//");

  private static int post(HttpClient http, int port, String path, String token) {
    RequestOptions options =
        new RequestOptions()
            .setMethod(HttpMethod.POST)
            .setHost("127.0.0.1")
            .setPort(port)
            .setURI(path)
            .putHeader("Content-Type", "application/json");
    if (token != null) {
      options.putHeader("Authorization", token);
    }
    return http.request(options)
        .compose(
            req -> req.send(new JsonObject().put("name", "sneaky").put("role", "admin").toBuffer()))
        .map(resp -> resp.statusCode())
        .await();
  }

  @Test
  void everySpellingOfAPathNeedsTheOperationsPermission(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      HttpClient http = vertx.createHttpClient();
      String readOnly = "Bearer " + fx.token("read-only");
      String basicAdmin =
          "Basic "
              + Base64.getEncoder()
                  .encodeToString(("x:" + ApiFixture.ADMIN).getBytes(StandardCharsets.UTF_8));
      for (String path : SPELLINGS) {
        assertThat(post(http, fx.api.port(), path, null))
            .as("no token: POST %s", path)
            .isIn(401, 404);
        assertThat(post(http, fx.api.port(), path, readOnly))
            .as("read-only: POST %s", path)
            .isIn(403, 404);
        // Basic credentials count only for boot scripts.
        assertThat(post(http, fx.api.port(), path, basicAdmin))
            .as("Basic: POST %s", path)
            .isIn(401, 404);
      }
      assertThat(fx.count("SELECT count(*) FROM api_tokens WHERE name = 'sneaky'")).isZero();
      http.close().await();
    }
  }

  @Test
  void aMalformedEscapeInThePathIsABadRequest(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      HttpClient http = vertx.createHttpClient();
      for (String path : List.of("/%ZZ", "/v1/%ZZ/tokens", "/v1/machines/%", "/v1/%ZZ")) {
        int status =
            http.request(
                    new RequestOptions()
                        .setMethod(HttpMethod.GET)
                        .setHost("127.0.0.1")
                        .setPort(fx.api.port())
                        .setURI(path))
                .compose(req -> req.send())
                .map(resp -> resp.statusCode())
                .await();
        assertThat(status).as(path).isIn(400, 401);
      }
      http.close().await();
    }
  }
}
