package io.warmmetal.api.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The token API's access keys: the create answer holds the pair once, listings the id only (the
 * client checks every answer against the contract).
 */
@ExtendWith(VertxExtension.class)
class TokenRoutesTest {
  private static ApiFixture fx;

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
  }

  @AfterAll
  static void stop() {
    fx.close();
  }

  private static JsonObject create(String name, String role) {
    return fx.mintToken(name, role, "default");
  }

  /** The listed token whose {@code field} is {@code value}. */
  private static JsonObject listed(String field, String value) {
    Response list = fx.client.get("/v1/tokens", ApiFixture.ADMIN);
    assertThat(list.status()).isEqualTo(200);
    JsonArray items = list.body().getJsonArray("items");
    for (int i = 0; i < items.size(); i++) {
      if (value.equals(items.getJsonObject(i).getString(field))) {
        return items.getJsonObject(i);
      }
    }
    throw new AssertionError("no token's " + field + " is " + value + ": " + list.raw());
  }

  @Test
  void theCreateAnswerHoldsTheAccessKeyPairAndTheListingItsIdOnly() {
    JsonObject created = create("ci", "client");
    String keyId = created.getString("accessKeyId");
    String secret = created.getString("secretAccessKey");
    assertThat(keyId).matches("AKWM[A-Z2-7]{16}");
    assertThat(secret).matches("[A-Za-z0-9+/]{40}");
    assertThat(create("ci-2", "client").getString("accessKeyId")).isNotEqualTo(keyId);

    JsonObject listing = listed("id", created.getString("id"));
    assertThat(listing.getString("accessKeyId")).isEqualTo(keyId);
    assertThat(listing.containsKey("secretAccessKey")).isFalse();
    assertThat(fx.client.get("/v1/tokens", ApiFixture.ADMIN).raw()).doesNotContain(secret);
  }

  @Test
  void everyRoleButBootGetsAKey() {
    for (String role : new String[] {"admin", "fleet-reader", "read-only"}) {
      assertThat(create(role + "-token", role).getString("secretAccessKey")).as(role).isNotNull();
    }
    JsonObject boot = create("rack-1", "boot");
    assertThat(boot.getValue("accessKeyId")).isNull();
    assertThat(boot.containsKey("secretAccessKey")).isFalse();
    assertThat(listed("id", boot.getString("id")).getValue("accessKeyId")).isNull();
  }

  @Test
  void theBootstrapAdminTokenHasNone() {
    JsonObject bootstrap = listed("name", "bootstrap-admin");
    assertThat(bootstrap.containsKey("accessKeyId")).isTrue();
    assertThat(bootstrap.getValue("accessKeyId")).isNull();
  }
}
