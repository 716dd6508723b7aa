package io.warmmetal.api.http;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;
import java.util.function.Consumer;

/**
 * The management port: what Prometheus and operators read from inside the cluster ({@code
 * /metrics}, and the probes' {@code /healthz} and {@code /readyz}), on a listener of its own so
 * that none of it is on the API port, which clients and the internet may reach. No authentication,
 * no contract: only the routes mounted here, anything else a 404 in the one error shape. Guarded as
 * the other ports are ({@link SlowClients}): caps, header and body clocks, malformed requests in
 * the error shape.
 */
public final class ManagementVerticle extends VerticleBase {
  private final String host;
  private final int port;
  private final SlowClients slowClients;
  private final Consumer<Router> mount;
  private HttpServer server;

  public ManagementVerticle(
      String host, int port, SlowClients slowClients, Consumer<Router> mount) {
    this.host = host;
    this.port = port;
    this.slowClients = slowClients;
    this.mount = mount;
  }

  @Override
  public Future<?> start() {
    Router router = Router.router(vertx);
    slowClients.timeBodies(router, Integer.MIN_VALUE); // gives the request its id too
    mount.accept(router);
    ContractRouter.handleErrors(router); // a 4xx Vert.x Web makes by itself (no Host) too
    HttpServerOptions options =
        slowClients.apply(new HttpServerOptions().setHost(host).setPort(port));
    return slowClients.listen(vertx.createHttpServer(options), router).onSuccess(s -> server = s);
  }

  public int actualPort() {
    return server.actualPort();
  }
}
