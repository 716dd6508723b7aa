package io.warmmetal.api.http;

import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;

/** Small helpers for JSON responses and RFC 3339 timestamps. */
public final class Json {
  private Json() {}

  /** RFC 3339 with seconds always present ({@code OffsetDateTime.toString} drops zero seconds). */
  public static String time(OffsetDateTime t) {
    return t == null ? null : DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(t);
  }

  public static void reply(RoutingContext ctx, int status, JsonObject body) {
    ctx.response()
        .setStatusCode(status)
        .putHeader("Content-Type", "application/json")
        .end(body.toBuffer());
  }

  public static void ok(RoutingContext ctx, JsonObject body) {
    reply(ctx, 200, body);
  }
}
