package io.warmmetal.api.http;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.openapi.router.RouterBuilder;
import java.util.function.Function;

/** Binds contract operations to handlers that answer with a future of JSON. */
public final class Operations {
  private final RouterBuilder builder;
  private final Function<String, Handler<RoutingContext>> guard;

  /**
   * {@code guard}: a handler per operation that runs before its handler (the permission check,
   * again).
   */
  public Operations(RouterBuilder builder, Function<String, Handler<RoutingContext>> guard) {
    this.builder = builder;
    this.guard = guard;
  }

  /**
   * A handler answering {@code status} with the JSON its future yields; any failure goes to the
   * error handler.
   */
  public Operations json(
      String operationId, int status, Function<RoutingContext, Future<JsonObject>> handler) {
    return handle(
        operationId, ctx -> handler.apply(ctx).onSuccess(body -> Json.reply(ctx, status, body)));
  }

  /** A handler answering 204 once its future completes. */
  public Operations noContent(String operationId, Function<RoutingContext, Future<?>> handler) {
    return handle(
        operationId,
        ctx -> handler.apply(ctx).onSuccess(x -> ctx.response().setStatusCode(204).end()));
  }

  /** A handler that writes its own response. */
  public Operations handle(String operationId, Function<RoutingContext, Future<?>> handler) {
    builder
        .getRoute(operationId)
        .addHandler(guard.apply(operationId))
        .addHandler(
            ctx -> {
              Future<?> result;
              try {
                result = handler.apply(ctx);
              } catch (RuntimeException e) {
                ctx.fail(e);
                return;
              }
              result.onFailure(ctx::fail);
            });
    return this;
  }
}
