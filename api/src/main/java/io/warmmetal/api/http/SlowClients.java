package io.warmmetal.api.http;

import io.netty.channel.Channel;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.ServerWebSocketHandshake;
import io.vertx.core.net.impl.ConnectionBase;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One port's guard against slow, piled-up and unknown clients; one per port, shared by the port's
 * verticles.
 *
 * <ul>
 *   <li>connections are capped in total and per client address from the moment they are accepted
 *       ({@link ConnectionCaps});
 *   <li>every request on a connection must bring its headers in time, and a connection idle too
 *       long is closed ({@link RequestClock}, Vert.x's idle timeout);
 *   <li>a request whose body does not arrive within the body timeout is answered 408 and its
 *       connection closed;
 *   <li>a URL with a malformed %-escape is answered 400 before routing, and what Vert.x cannot
 *       parse at all in the error shape too;
 *   <li>on a port that asks for client certificates ({@link #requiringClientCertificates}), a
 *       connection without one may call only the open paths, once.
 * </ul>
 */
public final class SlowClients {
  private static final Logger LOG = LoggerFactory.getLogger(SlowClients.class);
  private static final String BODY_TIMER = "warmmetal.bodyTimer";

  private final HttpLimits limits;
  private final ConnectionCaps caps;

  /**
   * The paths a connection without a client certificate may call; null on a port without client
   * certificates.
   */
  private final Set<String> openPaths;

  /**
   * @param port the port's name in log lines, e.g. "API port"
   */
  public SlowClients(String port, HttpLimits limits) {
    this(
        limits,
        new ConnectionCaps(port, limits.maxConnections(), limits.maxConnectionsPerAddress()),
        null);
  }

  private SlowClients(HttpLimits limits, ConnectionCaps caps, Set<String> openPaths) {
    this.limits = limits;
    this.caps = caps;
    this.openPaths = openPaths;
  }

  /**
   * The same guard for a TLS port that asks for client certificates (and has the TLS handshake
   * verify those it gets): a connection without one may call only {@code openPaths} — anything else
   * is a 401 in the error shape, a WebSocket upgrade a bare 401 — and only once (its response says
   * {@code Connection: close}); a connection with one counts under its certificate, at most {@code
   * maxPerCertificate} at once, instead of its address, since many clients with certificates may
   * share an address (behind a load balancer).
   */
  public SlowClients requiringClientCertificates(Set<String> openPaths, int maxPerCertificate) {
    return new SlowClients(
        limits, caps.withCertificateCap(maxPerCertificate), Set.copyOf(openPaths));
  }

  /** The port's open connections and refusals. */
  public ConnectionCaps connections() {
    return caps;
  }

  /** The server options with the limits Vert.x applies itself: the idle timeout; HTTP/1.1 only. */
  public HttpServerOptions apply(HttpServerOptions options) {
    return options
        .setIdleTimeout((int) limits.idleTimeout().toSeconds())
        .setIdleTimeoutUnit(TimeUnit.SECONDS)
        // HTTP/1.1 only: the clocks read HTTP/1.1, and with cleartext HTTP/2 on a connection exists
        // for Vert.x only
        // once its first bytes arrive, so a client that connects and sends nothing would escape the
        // header timeout.
        .setHttp2ClearTextEnabled(false)
        .setUseAlpn(false);
  }

  /**
   * Listens with the guard in place: the caps from accept, each connection's clocks, Vert.x's own
   * refusals in the error shape, then {@code requests}.
   */
  public Future<HttpServer> listen(HttpServer server, Handler<HttpServerRequest> requests) {
    return server
        .connectionHandler(this::connected)
        .invalidRequestHandler(SlowClients::invalidRequest)
        .requestHandler(requests(requests))
        .listen()
        .onSuccess(caps::install);
  }

  /** Root handlers, after the body handler: the body is in, its timer stops. */
  public List<Handler<RoutingContext>> rootHandlers() {
    return List.of(this::bodyRead);
  }

  /**
   * Times every request's body: a route ahead of all others (but {@code order - 1}, if one is
   * there).
   */
  public void timeBodies(Router router, int order) {
    router.route().order(order).handler(this::startBodyTimer);
  }

  /**
   * The WebSocket handshakes the port accepts: on a port with client certificates, only from a
   * connection with one.
   */
  public Handler<ServerWebSocketHandshake> webSocketHandshakes(
      Handler<ServerWebSocketHandshake> next) {
    return handshake -> {
      if (openPaths != null && !hasClientCertificate(handshake)) {
        handshake.reject(
            401); // Vert.x's handshake refusal has no body of ours; the connection closes after it
        return;
      }
      next.handle(handshake);
    };
  }

  private void connected(HttpConnection conn) {
    Channel channel = ((ConnectionBase) conn).channel();
    X509Certificate certificate = openPaths == null ? null : clientCertificate(conn);
    if (certificate != null && !caps.certified(channel, certificate)) {
      channel.close();
      return;
    }
    RequestClock clock = RequestClock.start(channel, limits);
    if (openPaths != null && certificate == null) {
      clock.oneRequestOnly();
    }
  }

  /** Headers have come; a request this port refuses whatever its route is refused here. */
  private Handler<HttpServerRequest> requests(Handler<HttpServerRequest> router) {
    return request -> {
      ApiError refusal = null;
      if (openPaths != null
          && !openPaths.contains(request.path())
          && !hasClientCertificate(request.connection())) {
        refusal =
            ApiError.of(
                ErrorCode.Unauthorized,
                "present the agent's client certificate (mutual TLS); without "
                    + "one this port answers only "
                    + String.join(", ", openPaths));
      } else {
        refusal = MalformedEscapes.find(request.uri());
      }
      if (refusal == null) {
        router.handle(request);
        return;
      }
      String length = request.headers().get("Content-Length");
      boolean hasBody =
          request.headers().contains("Transfer-Encoding")
              || (length != null && !"0".equals(length));
      if (hasBody) {
        request
            .response()
            .putHeader("Connection", "close"); // its body is not read: the connection cannot go on
      }
      ErrorResponses.send(request.response(), refusal, RequestIds.of(request))
          .onComplete(
              x -> {
                if (hasBody) {
                  request.connection().close();
                }
              });
    };
  }

  /**
   * What Vert.x could not parse as an HTTP/1.x request: answered in the error shape, and the
   * connection closed.
   */
  private static void invalidRequest(HttpServerRequest request) {
    Throwable cause = request.decoderResult().cause();
    ApiError error;
    if (cause instanceof TooLongHttpLineException) {
      error =
          ApiError.of(ErrorCode.UriTooLong, "the request line (method, URL, version) is too long");
    } else if (cause instanceof TooLongHttpHeaderException) {
      error = ApiError.of(ErrorCode.HeadersTooLarge, "the request's headers are too large");
    } else if (cause instanceof RequestClock.UnknownVersion) {
      error =
          ApiError.of(
              ErrorCode.HttpVersionNotSupported,
              "this port speaks HTTP/1.1 (and 1.0), not " + cause.getMessage());
    } else {
      error = ApiError.of(ErrorCode.ValidationError, "the request is not valid HTTP/1.1");
    }
    LOG.debug(
        "Refused a malformed request from {}: {}",
        request.remoteAddress(),
        cause == null ? "?" : cause.getMessage());
    request.response().putHeader("Connection", "close");
    ErrorResponses.send(request.response(), error, RequestIds.of(request))
        .onComplete(x -> request.connection().close());
  }

  /**
   * The first route's handler: the request gets its id, and its body must be in before the body
   * timeout.
   */
  private void startBodyTimer(RoutingContext ctx) {
    RequestIds.ensure(
        ctx); // before the body, so even a request that never completes is logged with its id
    if (ctx.get(BODY_TIMER) == null) {
      ctx.put(
          BODY_TIMER,
          ctx.vertx().setTimer(limits.bodyTimeout().toMillis(), id -> bodyTooSlow(ctx)));
      ctx.addEndHandler(x -> bodyRead(ctx, false));
    }
    ctx.next();
  }

  private void bodyRead(RoutingContext ctx) {
    bodyRead(ctx, true);
  }

  private void bodyRead(RoutingContext ctx, boolean next) {
    Long timer = ctx.get(BODY_TIMER);
    if (timer != null) {
      ctx.put(BODY_TIMER, -1L); // cancelled: a reroute must not start another
      if (timer >= 0) {
        ctx.vertx().cancelTimer(timer);
      }
    }
    if (next) {
      ctx.next();
    }
  }

  private void bodyTooSlow(RoutingContext ctx) {
    if (ctx.request().isEnded() || ctx.response().ended() || ctx.response().closed()) {
      return;
    }
    LOG.debug(
        "Request {} {} did not send its body in time [requestId={}]",
        ctx.request().method(),
        ctx.request().path(),
        RequestIds.get(ctx));
    HttpConnection conn = ctx.request().connection();
    if (ctx.response().headWritten()) {
      conn.close();
      return;
    }
    ctx.response().putHeader("Connection", "close");
    ErrorResponses.send(
            ctx,
            ApiError.of(
                ErrorCode.RequestTimeout,
                "the request body did not arrive within " + limits.bodyTimeout().toSeconds() + "s"))
        .onComplete(x -> conn.close());
  }

  private static boolean hasClientCertificate(HttpConnection conn) {
    return clientCertificate(conn) != null;
  }

  /** The connection's verified client certificate, or null. */
  private static X509Certificate clientCertificate(HttpConnection conn) {
    if (!conn.isSsl()) {
      return null;
    }
    try {
      List<Certificate> chain = conn.peerCertificates();
      return !chain.isEmpty() && chain.get(0) instanceof X509Certificate certificate
          ? certificate
          : null;
    } catch (SSLPeerUnverifiedException none) {
      return null;
    }
  }

  private static boolean hasClientCertificate(ServerWebSocketHandshake handshake) {
    try {
      return handshake.isSsl() && !handshake.peerCertificates().isEmpty();
    } catch (SSLPeerUnverifiedException none) {
      return false;
    }
  }
}
