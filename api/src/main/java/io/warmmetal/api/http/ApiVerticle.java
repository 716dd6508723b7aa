package io.warmmetal.api.http;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.openapi.contract.OpenAPIContract;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One HTTP event loop serving the API: routes built from the contract (every request validated before a handler
 * sees it), authentication ahead of validation, and operational endpoints beside them. Deployed once per core;
 * all instances share one port.
 */
public final class ApiVerticle extends VerticleBase {
  private static final Logger ACCESS = LoggerFactory.getLogger("io.warmmetal.api.access");
  static final int BODY_LIMIT = 256 * 1024;

  private final OpenAPIContract contract;
  private final String host;
  private final int port;
  private final Consumer<Operations> mountOperations;
  private final Consumer<Router> mountOperational;
  private final Handler<RoutingContext> authenticate;
  private final Function<String, Handler<RoutingContext>> guard;
  private final SlowClients slowClients;
  private HttpServer server;

  /**
   * @param authenticate runs before validation on every request
   * @param guard        per operation, runs before its handler (the permission check)
   * @param slowClients  the port's guard, shared by its verticles
   */
  public ApiVerticle(OpenAPIContract contract, String host, int port, Handler<RoutingContext> authenticate,
      Function<String, Handler<RoutingContext>> guard, Consumer<Operations> mountOperations,
      Consumer<Router> mountOperational, SlowClients slowClients) {
    this.contract = contract;
    this.host = host;
    this.port = port;
    this.authenticate = authenticate;
    this.guard = guard;
    this.mountOperations = mountOperations;
    this.mountOperational = mountOperational;
    this.slowClients = slowClients;
  }

  @Override
  public Future<?> start() {
    List<Handler<RoutingContext>> rootHandlers = new ArrayList<>(slowClients.rootHandlers());
    rootHandlers.addAll(List.of(ApiVerticle::accessLog, authenticate));
    Router router = ContractRouter.create(vertx, contract, BODY_LIMIT, rootHandlers, guard, mountOperations);
    // Ahead of every route but the reroute below, so the body timer runs while the body handler reads.
    slowClients.timeBodies(router, Integer.MIN_VALUE + 1);
    mountOperational.accept(router);
    // Custom methods as Google's API design spells them (POST /v1/machines:enroll-ssh, /v1/machines/{id}:recover)
    // are the contract's /verb sub-paths: Vert.x routes cannot hold a literal colon, so such paths are rerouted.
    router.routeWithRegex("/v1/[^:]*[^/:]:[a-z][a-z-]*").order(Integer.MIN_VALUE).handler(ctx -> {
      String path = ctx.normalizedPath();
      int colon = path.lastIndexOf(':');
      ctx.reroute(ctx.request().method(), path.substring(0, colon) + "/" + path.substring(colon + 1));
    });
    HttpServerOptions options = slowClients.apply(new HttpServerOptions().setHost(host).setPort(port)
        .setCompressionSupported(true));
    return slowClients.listen(vertx.createHttpServer(options), router).onSuccess(s -> server = s);
  }

  public int actualPort() {
    return server.actualPort();
  }

  private static void accessLog(RoutingContext ctx) {
    long started = System.nanoTime();
    ctx.addEndHandler(x -> {
      if (ACCESS.isDebugEnabled()) {
        ACCESS.debug("{} {} {} {}us requestId={}", ctx.request().method(), ctx.request().path(),
            ctx.response().getStatusCode(), (System.nanoTime() - started) / 1000, RequestIds.get(ctx));
      }
    });
    ctx.next();
  }
}
