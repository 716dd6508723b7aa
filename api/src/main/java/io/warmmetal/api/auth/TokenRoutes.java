package io.warmmetal.api.auth;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;

/** Minting, listing and revoking API tokens. */
public final class TokenRoutes {
  private TokenRoutes() {}

  public static void mount(Operations ops, TokenStore tokens) {
    ops.json("listTokens", 200, ctx -> tokens.list()
        .map(list -> new JsonObject().put("items", new JsonArray(list))));
    ops.json("createToken", 201, ctx -> {
      JsonObject body = Params.of(ctx).body();
      return tokens.create(body.getString("name"), Role.fromWire(body.getString("role")));
    });
    ops.noContent("revokeToken", ctx -> tokens.revoke(Params.of(ctx).path("tokenId")));
  }
}
