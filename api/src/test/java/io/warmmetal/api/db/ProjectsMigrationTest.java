package io.warmmetal.api.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.TestDatabase;
import java.sql.Connection;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A database from before projects: its tokens, launches and instances land in the project 'default'
 * and work on.
 */
@ExtendWith(VertxExtension.class)
class ProjectsMigrationTest {

  @Test
  void whatExistedBeforeProjectsMovesIntoTheDefaultProject(Vertx vertx) throws Exception {
    String url = TestDatabase.freshDatabaseAt("16");
    String secret = "wm_token-from-before-projects-0123456789";
    try (Connection c = TestDatabase.connect(url)) {
      c.createStatement()
          .execute(
              "INSERT INTO api_tokens (id, name, role, token_hash) VALUES ('tok-00000000000000aa',"
                  + " 'old-client', 'client', sha256(convert_to('"
                  + secret
                  + "', 'UTF8')))");
      c.createStatement()
          .execute(
              "INSERT INTO launches (id, caller, client_token, request_hash)"
                  + " VALUES ('r-old', 'tok-00000000000000aa', 'old-token', '\\x00')");
    }

    try (ApiFixture fx = ApiFixture.start(vertx, Map.of("WARMMETAL_DATABASE_URL", url))) {
      assertThat(
              fx.count(
                  "SELECT count(*) FROM api_tokens WHERE id = 'tok-00000000000000aa' AND project = 'default'"))
          .isEqualTo(1);
      assertThat(
              fx.count("SELECT count(*) FROM launches WHERE id = 'r-old' AND project = 'default'"))
          .isEqualTo(1);
      // The old token still works, in 'default', and launches there.
      fx.registerMachines(1, ApiFixture.facts(8, 32), true);
      Response launched =
          fx.client.post("/v1/instances", secret, new JsonObject().put("shape", "x86-8c-32g"));
      assertThat(launched.status()).isEqualTo(201);
      assertThat(launched.body().getJsonArray("instances").getJsonObject(0).getString("project"))
          .isEqualTo("default");
      Response tokens = fx.client.get("/v1/tokens", ApiFixture.ADMIN);
      assertThat(tokens.raw()).contains("\"project\":\"default\"");
    }
  }
}
