package io.warmmetal.api.ec2;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.testing.ApiFixture;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;

/** Access keys as {@code POST /v1/tokens} answers them, once, with the token. */
final class AccessKeysForTests {
  private AccessKeysForTests() {}

  static AwsBasicCredentials mint(ApiFixture fx, String role, String project) {
    JsonObject token =
        fx.client
            .post(
                "/v1/tokens",
                ApiFixture.ADMIN,
                new JsonObject()
                    .put("name", "ec2-" + role)
                    .put("role", role)
                    .put("project", project))
            .body();
    return AwsBasicCredentials.create(
        token.getString("accessKeyId", token.getString("token")),
        token.getString("secretAccessKey", "TEMP"));
  }
}
