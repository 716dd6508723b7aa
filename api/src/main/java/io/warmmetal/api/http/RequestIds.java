package io.warmmetal.api.http;

import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Gives every request an id (the caller's {@code X-Request-Id} if sane) for logs and error bodies.
 */
public final class RequestIds {
  private static final String KEY = "warmmetal.requestId";

  private RequestIds() {}

  public static void assign(RoutingContext ctx) {
    ensure(ctx);
    ctx.next();
  }

  /**
   * Gives the request its id unless it has one (the API port assigns it before the body is read).
   */
  public static void ensure(RoutingContext ctx) {
    if (ctx.get(KEY) == null) {
      String id = of(ctx.request());
      ctx.put(KEY, id);
      ctx.response().putHeader("X-Request-Id", id);
    }
  }

  /** The id a request gets: the caller's if sane, else a new one. */
  static String of(HttpServerRequest request) {
    String given = request.getHeader("X-Request-Id");
    return given != null && given.matches("[A-Za-z0-9._-]{1,64}")
        ? given
        : Long.toHexString(ThreadLocalRandom.current().nextLong());
  }

  public static String get(RoutingContext ctx) {
    return ctx.get(KEY);
  }
}
