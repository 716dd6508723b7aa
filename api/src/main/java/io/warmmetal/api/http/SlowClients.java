package io.warmmetal.api.http;

import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One API verticle's guard against slow and piled-up clients, on its event loop: a connection beyond the cap is
 * closed at once; one whose first request's headers do not come within the header timeout is closed (Vert.x has no
 * such timeout); a request whose body does not arrive within the body timeout is answered 408 and its connection
 * closed; a URL with a malformed %-escape is answered 400 before routing.
 */
final class SlowClients {
  private static final Logger LOG = LoggerFactory.getLogger(SlowClients.class);
  private static final String BODY_TIMER = "warmmetal.bodyTimer";

  private final Vertx vertx;
  private final HttpLimits limits;
  /** Connections whose first request has not come yet, with the timer that closes them. */
  private final Map<HttpConnection, Long> awaitingHeaders = new HashMap<>();

  SlowClients(Vertx vertx, HttpLimits limits) {
    this.vertx = vertx;
    this.limits = limits;
  }

  /** The server's connection handler. */
  void connected(HttpConnection conn) {
    if (!limits.connections().tryOpen()) {
      LOG.debug("Closing a connection from {}: the connection cap is reached", conn.remoteAddress());
      conn.close();
      return;
    }
    long timer = vertx.setTimer(limits.headerTimeout().toMillis(), id -> {
      if (awaitingHeaders.remove(conn) != null) {
        LOG.debug("Closing a connection from {}: no request headers in time", conn.remoteAddress());
        conn.close();
      }
    });
    awaitingHeaders.put(conn, timer);
    conn.closeHandler(v -> {
      limits.connections().closed();
      cancel(awaitingHeaders.remove(conn));
    });
  }

  /** The server's request handler: headers have come; a URL that cannot be routed is refused here. */
  Handler<HttpServerRequest> requests(Handler<HttpServerRequest> router) {
    return request -> {
      cancel(awaitingHeaders.remove(request.connection()));
      ApiError malformed = MalformedEscapes.find(request.uri());
      if (malformed == null) {
        router.handle(request);
        return;
      }
      String length = request.headers().get("Content-Length");
      boolean hasBody = request.headers().contains("Transfer-Encoding") || (length != null && !"0".equals(length));
      if (hasBody) {
        request.response().putHeader("Connection", "close"); // its body is not read: the connection cannot go on
      }
      ErrorResponses.send(request.response(), malformed, RequestIds.of(request)).onComplete(x -> {
        if (hasBody) {
          request.connection().close();
        }
      });
    };
  }

  /** The first route's handler: the request gets its id, and its body must be in before the body timeout. */
  void startBodyTimer(RoutingContext ctx) {
    RequestIds.ensure(ctx); // before the body, so even a request that never completes is logged with its id
    if (ctx.get(BODY_TIMER) == null) {
      ctx.put(BODY_TIMER, vertx.setTimer(limits.bodyTimeout().toMillis(), id -> bodyTooSlow(ctx)));
      ctx.addEndHandler(x -> bodyRead(ctx, false));
    }
    ctx.next();
  }

  /** A root handler after the body handler: the body is in. */
  void bodyRead(RoutingContext ctx) {
    bodyRead(ctx, true);
  }

  private void bodyRead(RoutingContext ctx, boolean next) {
    Long timer = ctx.get(BODY_TIMER);
    if (timer != null) {
      ctx.put(BODY_TIMER, -1L); // cancelled: a reroute must not start another
      cancel(timer);
    }
    if (next) {
      ctx.next();
    }
  }

  private void bodyTooSlow(RoutingContext ctx) {
    if (ctx.request().isEnded() || ctx.response().ended() || ctx.response().closed()) {
      return;
    }
    LOG.debug("Request {} {} did not send its body in time [requestId={}]", ctx.request().method(),
        ctx.request().path(), RequestIds.get(ctx));
    HttpConnection conn = ctx.request().connection();
    if (ctx.response().headWritten()) {
      conn.close();
      return;
    }
    ctx.response().putHeader("Connection", "close");
    ErrorResponses.send(ctx, ApiError.of(ErrorCode.RequestTimeout, "the request body did not arrive within "
        + limits.bodyTimeout().toSeconds() + "s")).onComplete(x -> conn.close());
  }

  private void cancel(Long timer) {
    if (timer != null && timer >= 0) {
      vertx.cancelTimer(timer);
    }
  }
}
