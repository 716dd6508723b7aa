package io.warmmetal.api.http;

import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.openapi.router.RequestExtractor;
import io.vertx.ext.web.openapi.router.RouterBuilder;
import io.vertx.openapi.contract.OpenAPIContract;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * A router built from a contract, as every port here has one: the body read first (no file
 * uploads), a request id, the given root handlers, every request validated against the contract,
 * and every failure in the one error shape.
 */
public final class ContractRouter {
  /** A JSON escape of half a UTF-16 surrogate pair without its other half. */
  private static final Pattern LONE_SURROGATE =
      Pattern.compile(
          "(?i)\\\\u(d[89ab][0-9a-f]{2})(?!\\\\ud[c-f][0-9a-f]{2})|(?<!\\\\ud[89ab][0-9a-f]{2})\\\\ud[c-f][0-9a-f]{2}");

  private ContractRouter() {}

  /**
   * Refuses a body with an unpaired surrogate escape: such a string cannot be stored as UTF-8
   * (PostgreSQL would get a '?'), so two different client tokens or names could become one.
   */
  private static void refuseLoneSurrogates(RoutingContext ctx) {
    Buffer body = ctx.body() == null ? null : ctx.body().buffer();
    if (body != null && body.length() > 0 && LONE_SURROGATE.matcher(body.toString()).find()) {
      ctx.fail(
          ApiError.invalid(
              "body", "the body holds an unpaired UTF-16 surrogate (\\uD800-\\uDFFF escape)"));
      return;
    }
    ctx.next();
  }

  /**
   * The body handler, but a form or multipart body is refused (415) before it is read: the API
   * takes JSON only, and Vert.x would decode such a body as form attributes — failing on a GET
   * (500) and, after a malformed %-escape in the query, throwing where nothing answers the request.
   */
  private static Handler<RoutingContext> jsonBodies(BodyHandler body) {
    return ctx -> {
      String type = ctx.request().getHeader("Content-Type");
      type = type == null ? "" : type.trim().toLowerCase(Locale.ROOT);
      if (type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/")) {
        ctx.fail(415);
        return;
      }
      body.handle(ctx);
    };
  }

  /**
   * Answers in the error shape whatever Vert.x Web ends with a bare status (no route, a body too
   * large, an Expect it cannot meet, ...): every 4xx, and 500.
   */
  static void handleErrors(Router router) {
    for (int status = 400; status < 500; status++) {
      router.errorHandler(status, ErrorResponses::handle);
    }
    router.errorHandler(500, ErrorResponses::handle);
  }

  public static Router create(
      Vertx vertx,
      OpenAPIContract contract,
      int bodyLimit,
      List<Handler<RoutingContext>> rootHandlers,
      Consumer<Operations> mountOperations) {
    return create(
        vertx,
        contract,
        bodyLimit,
        rootHandlers,
        operationId -> RoutingContext::next,
        mountOperations);
  }

  /** As above, with a guard handler per operation that runs before the operation's own. */
  public static Router create(
      Vertx vertx,
      OpenAPIContract contract,
      int bodyLimit,
      List<Handler<RoutingContext>> rootHandlers,
      Function<String, Handler<RoutingContext>> guard,
      Consumer<Operations> mountOperations) {
    RouterBuilder builder =
        RouterBuilder.create(
                vertx, CachedValidators.wrap(contract), RequestExtractor.withBodyHandler())
            .rootHandler(
                jsonBodies(
                    BodyHandler.create(false).setBodyLimit(bodyLimit))) // first, as Vert.x wants
            .rootHandler(RequestIds::assign)
            .rootHandler(ContractRouter::refuseLoneSurrogates);
    rootHandlers.forEach(builder::rootHandler);
    mountOperations.accept(new Operations(builder, guard));
    // Security is the root handlers' job (before validation); the builder's own would only repeat
    // it, after.
    builder
        .getRoutes()
        .forEach(r -> r.setDoSecurity(false).addFailureHandler(ErrorResponses::handle));
    Router router = builder.createRouter();
    handleErrors(router);
    return router;
  }
}
