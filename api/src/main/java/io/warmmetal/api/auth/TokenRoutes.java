package io.warmmetal.api.auth;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;

/**
 * Minting, listing and revoking API tokens; a token goes to the project the body names, or the
 * caller's.
 */
public final class TokenRoutes {
  private TokenRoutes() {}

  public static void mount(Operations ops, TokenStore tokens, Pool db) {
    ops.json(
        "listTokens",
        200,
        ctx ->
            Scope.of(ctx, db)
                .compose(scope -> tokens.list(scope.project()))
                .map(list -> new JsonObject().put("items", new JsonArray(list))));
    ops.json(
        "createToken",
        201,
        ctx -> {
          JsonObject body = Params.of(ctx).body();
          return Scope.of(ctx, db)
              .compose(
                  scope ->
                      tokens.create(
                          body.getString("name"),
                          Role.fromWire(body.getString("role")),
                          body.getString("project", scope.home()),
                          body.getJsonObject("machineLabels")));
        });
    ops.noContent("revokeToken", ctx -> tokens.revoke(Params.of(ctx).path("tokenId")));
  }
}
