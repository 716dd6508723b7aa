package io.warmmetal.api.http;

import io.vertx.ext.web.RoutingContext;
import java.util.concurrent.ThreadLocalRandom;

/** Gives every request an id (the caller's {@code X-Request-Id} if sane) for logs and error bodies. */
public final class RequestIds {
  private static final String KEY = "warmmetal.requestId";

  private RequestIds() {}

  public static void assign(RoutingContext ctx) {
    String given = ctx.request().getHeader("X-Request-Id");
    String id = given != null && given.matches("[A-Za-z0-9._-]{1,64}")
        ? given : Long.toHexString(ThreadLocalRandom.current().nextLong());
    ctx.put(KEY, id);
    ctx.response().putHeader("X-Request-Id", id);
    ctx.next();
  }

  public static String get(RoutingContext ctx) {
    return ctx.get(KEY);
  }
}
