package io.warmmetal.api.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.contract.Operation;
import io.warmmetal.api.WarmMetalApi;
import io.warmmetal.api.auth.AuthHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The two contracts stay consistent with each other and with the server's rules. */
@ExtendWith(VertxExtension.class)
class ContractsTest {

  @Test
  void agentsDescribeMachinesAsThePublicApiDoes(Vertx vertx) {
    JsonObject publicSchemas =
        OpenAPIContract.from(vertx, WarmMetalApi.CONTRACT)
            .await()
            .getRawContract()
            .getJsonObject("components")
            .getJsonObject("schemas");
    JsonObject enrollment =
        OpenAPIContract.from(vertx, WarmMetalApi.AGENT_CONTRACT)
            .await()
            .getRawContract()
            .getJsonObject("components")
            .getJsonObject("schemas")
            .getJsonObject("Enrollment")
            .getJsonObject("properties");
    // (compared as plain JSON: the parsed contracts hold proxies)
    assertThat(plain(enrollment.getJsonObject("facts")))
        .isEqualTo(plain(publicSchemas.getJsonObject("Facts")));
    assertThat(plain(enrollment.getJsonObject("identity").getJsonObject("properties")))
        .isEqualTo(plain(publicSchemas.getJsonObject("Identity").getJsonObject("properties")));
  }

  private static JsonObject plain(JsonObject json) {
    return new JsonObject(json.encode());
  }

  @Test
  void everyPublicOperationDeclaresItsPermission(Vertx vertx) {
    OpenAPIContract contract = OpenAPIContract.from(vertx, WarmMetalApi.CONTRACT).await();
    assertThat(contract.operations()).hasSizeGreaterThan(20);
    for (Operation op : contract.operations()) {
      assertThat(op.getExtensions())
          .as(op.getOperationId())
          .containsKey(AuthHandler.PERMISSION_EXTENSION);
    }
  }

  @Test
  void everyPublicOperationDocumentsTheRetryContract(Vertx vertx) {
    OpenAPIContract contract = OpenAPIContract.from(vertx, WarmMetalApi.CONTRACT).await();
    for (Operation op : contract.operations()) {
      var unavailable = op.getResponse(503);
      assertThat(unavailable).as(op.getOperationId() + " documents 503").isNotNull();
      assertThat(unavailable.getHeaders())
          .as(op.getOperationId() + "'s 503 carries Retry-After")
          .anyMatch(h -> h.getName().equals("Retry-After") && h.isRequired());
    }
  }
}
