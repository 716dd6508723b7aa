package io.warmmetal.api.http;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.openapi.contract.OpenAPIContract;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One HTTP event loop serving the API: routes built from the contract (every request validated
 * before a handler sees it), authentication ahead of validation, and operational endpoints beside
 * them. Deployed once per core; all instances share one port.
 */
public final class ApiVerticle extends VerticleBase {
  private static final Logger ACCESS = LoggerFactory.getLogger("io.warmmetal.api.access");
  public static final int BODY_LIMIT = 256 * 1024;

  private final OpenAPIContract contract;
  private final String host;
  private final int port;
  private final Consumer<Operations> mountOperations;
  private final Consumer<Router> mountOperational;
  private final Handler<RoutingContext> authenticate;
  private final Function<String, Handler<RoutingContext>> guard;
  private final SlowClients slowClients;
  private final Tls tls;
  private HttpServer server;

  /**
   * A listener serving part of the API over TLS: its key and certificate chain (PEM), and the one
   * path prefix it serves (anything else is a 404 there).
   */
  public record Tls(String keyPem, String chainPem, String onlyUnder) {}

  /**
   * @param authenticate runs before validation on every request
   * @param guard per operation, runs before its handler (the permission check)
   * @param slowClients the port's guard, shared by its verticles
   */
  public ApiVerticle(
      OpenAPIContract contract,
      String host,
      int port,
      Handler<RoutingContext> authenticate,
      Function<String, Handler<RoutingContext>> guard,
      Consumer<Operations> mountOperations,
      Consumer<Router> mountOperational,
      SlowClients slowClients) {
    this(
        contract,
        host,
        port,
        authenticate,
        guard,
        mountOperations,
        mountOperational,
        slowClients,
        null);
  }

  /** As above, over TLS and for {@code tls.onlyUnder()} only (null: the plain API port). */
  public ApiVerticle(
      OpenAPIContract contract,
      String host,
      int port,
      Handler<RoutingContext> authenticate,
      Function<String, Handler<RoutingContext>> guard,
      Consumer<Operations> mountOperations,
      Consumer<Router> mountOperational,
      SlowClients slowClients,
      Tls tls) {
    this.contract = contract;
    this.host = host;
    this.port = port;
    this.authenticate = authenticate;
    this.guard = guard;
    this.mountOperations = mountOperations;
    this.mountOperational = mountOperational;
    this.slowClients = slowClients;
    this.tls = tls;
  }

  @Override
  public Future<?> start() {
    List<Handler<RoutingContext>> rootHandlers = new ArrayList<>(slowClients.rootHandlers());
    rootHandlers.addAll(List.of(ApiVerticle::accessLog, authenticate));
    Router router =
        ContractRouter.create(vertx, contract, BODY_LIMIT, rootHandlers, guard, mountOperations);
    // Ahead of every route but the reroute below, so the body timer runs while the body handler
    // reads.
    slowClients.timeBodies(router, Integer.MIN_VALUE + 1);
    mountOperational.accept(router);
    // Custom methods as Google's API design spells them (POST /v1/machines:enroll-ssh,
    // /v1/machines/{id}:recover)
    // are the contract's /verb sub-paths: Vert.x routes cannot hold a literal colon, so such paths
    // are rerouted.
    router
        .routeWithRegex("/v1/[^:]*[^/:]:[a-z][a-z-]*")
        .order(Integer.MIN_VALUE)
        .handler(
            ctx -> {
              String path = ctx.normalizedPath();
              int colon = path.lastIndexOf(':');
              ctx.reroute(
                  ctx.request().method(),
                  path.substring(0, colon) + "/" + path.substring(colon + 1));
            });
    if (tls != null) {
      // Ahead of every route of the contract: this listener serves its prefix and nothing else.
      router
          .route()
          .order(Integer.MIN_VALUE + 1)
          .handler(
              ctx -> {
                if (ctx.normalizedPath().startsWith(tls.onlyUnder())) {
                  ctx.next();
                } else {
                  ErrorResponses.send(
                      ctx,
                      ApiError.of(
                          ErrorCode.NotFound,
                          "this port serves only "
                              + tls.onlyUnder()
                              + "…; the rest of the API is on its plain port"));
                }
              });
    }
    HttpServerOptions options =
        slowClients.apply(
            new HttpServerOptions().setHost(host).setPort(port).setCompressionSupported(true));
    if (tls != null) {
      // TLS 1.2 as well as 1.3: iPXE speaks at most 1.2.
      options
          .setSsl(true)
          .setEnabledSecureTransportProtocols(Set.of("TLSv1.2", "TLSv1.3"))
          .setKeyCertOptions(
              new PemKeyCertOptions()
                  .addKeyValue(Buffer.buffer(tls.keyPem()))
                  .addCertValue(Buffer.buffer(tls.chainPem())));
    }
    return slowClients.listen(vertx.createHttpServer(options), router).onSuccess(s -> server = s);
  }

  public int actualPort() {
    return server.actualPort();
  }

  /** Logs each request at DEBUG (logger {@code io.warmmetal.api.access}) when it ends. */
  public static void accessLog(RoutingContext ctx) {
    long started = System.nanoTime();
    ctx.addEndHandler(
        x -> {
          if (ACCESS.isDebugEnabled()) {
            ACCESS.debug(
                "{} {} {} {}us requestId={}",
                ctx.request().method(),
                ctx.request().path(),
                ctx.response().getStatusCode(),
                (System.nanoTime() - started) / 1000,
                RequestIds.get(ctx));
          }
        });
    ctx.next();
  }
}
