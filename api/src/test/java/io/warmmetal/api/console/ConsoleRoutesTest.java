package io.warmmetal.api.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The console's files: served without a token, with their types, caching and a strict policy; or
 * not at all.
 */
@ExtendWith(VertxExtension.class)
class ConsoleRoutesTest {
  private final HttpClient http = HttpClient.newHttpClient(); // follows no redirects

  private HttpResponse<String> get(ApiFixture fx, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + fx.api.port() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void servesTheFilesWithoutATokenUnderAStrictPolicy(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      var index = get(fx, "/console/");
      assertThat(index.statusCode()).isEqualTo(200);
      assertThat(index.headers().firstValue("Content-Type"))
          .hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));
      assertThat(index.headers().firstValue("Content-Security-Policy"))
          .contains(ConsoleRoutes.POLICY);
      assertThat(ConsoleRoutes.POLICY).startsWith("default-src 'self';").doesNotContain("unsafe");
      assertThat(index.headers().firstValue("X-Content-Type-Options")).contains("nosniff");
      assertThat(index.headers().firstValue("Cache-Control"))
          .hasValueSatisfying(
              c -> assertThat(c).contains("max-age=" + ConsoleRoutes.MAX_AGE_SECONDS));
      assertThat(index.headers().firstValue("Last-Modified")).isPresent();
      // No inline script or style for the policy to refuse: the module and the sheet are files.
      assertThat(index.body())
          .contains("<script type=\"module\" src=\"console.js\"></script>")
          .doesNotContain("<script>")
          .doesNotContain("style=")
          .doesNotContain("onclick");

      var script = get(fx, "/console/console.js");
      assertThat(script.statusCode()).isEqualTo(200);
      assertThat(script.headers().firstValue("Content-Type"))
          .hasValueSatisfying(t -> assertThat(t).matches("(application|text)/javascript.*"));
      assertThat(get(fx, "/console/console.css").headers().firstValue("Content-Type"))
          .hasValueSatisfying(t -> assertThat(t).startsWith("text/css"));
      assertThat(get(fx, "/console/icon.svg").headers().firstValue("Content-Type"))
          .hasValueSatisfying(t -> assertThat(t).startsWith("image/svg+xml"));

      var bare = get(fx, "/console");
      assertThat(bare.statusCode()).isEqualTo(302);
      assertThat(bare.headers().firstValue("Location")).contains("/console/");
      assertThat(get(fx, "/console/missing.js").statusCode()).isEqualTo(404);
      assertThat(get(fx, "/console/../openapi.yaml").statusCode()).isEqualTo(404);
      // The data stays behind the token.
      assertThat(get(fx, "/v1/pools").statusCode()).isEqualTo(401);
    }
  }

  @Test
  void switchedOffServesNothing(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx, Map.of("WARMMETAL_CONSOLE", "false"))) {
      assertThat(get(fx, "/console/").statusCode()).isEqualTo(404);
      assertThat(get(fx, "/console/console.js").statusCode()).isEqualTo(404);
    }
  }
}
