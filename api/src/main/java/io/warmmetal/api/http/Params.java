package io.warmmetal.api.http;

import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.openapi.router.RouterBuilder;
import io.vertx.openapi.validation.RequestParameter;
import io.vertx.openapi.validation.ValidatedRequest;

/** Typed access to a request the contract has already validated. */
public final class Params {
  private final ValidatedRequest request;

  private Params(ValidatedRequest request) {
    this.request = request;
  }

  public static Params of(RoutingContext ctx) {
    return new Params(ctx.get(RouterBuilder.KEY_META_DATA_VALIDATED_REQUEST));
  }

  public String path(String name) {
    return request.getPathParameters().get(name).getString();
  }

  public String query(String name) {
    RequestParameter p = request.getQuery().get(name);
    return p == null || p.isNull() ? null : String.valueOf(p.get());
  }

  public Boolean queryBoolean(String name) {
    RequestParameter p = request.getQuery().get(name);
    return p == null || p.isNull() ? null : p.getBoolean();
  }

  public int limit() {
    RequestParameter p = request.getQuery().get("limit");
    return p == null || p.isNull() ? 100 : p.getInteger();
  }

  public JsonObject body() {
    RequestParameter b = request.getBody();
    return b == null || b.isNull() ? new JsonObject() : b.getJsonObject();
  }
}
