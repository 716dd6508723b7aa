package io.warmmetal.api.http;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The management port: what Prometheus and operators read from inside the cluster ({@code
 * /metrics}, and the probes' {@code /healthz} and {@code /readyz}), on a listener of its own so
 * that none of it is on the API port, which clients and the internet may reach. No authentication,
 * no contract: only the routes mounted here, anything else a 404 in the one error shape.
 */
public final class ManagementVerticle extends VerticleBase {
  private final String host;
  private final int port;
  private final Duration idleTimeout;
  private final Consumer<Router> mount;
  private HttpServer server;

  public ManagementVerticle(String host, int port, Duration idleTimeout, Consumer<Router> mount) {
    this.host = host;
    this.port = port;
    this.idleTimeout = idleTimeout;
    this.mount = mount;
  }

  @Override
  public Future<?> start() {
    Router router = Router.router(vertx);
    router.route().handler(RequestIds::assign);
    mount.accept(router);
    for (int status : new int[] {404, 405, 500}) {
      router.errorHandler(status, ErrorResponses::handle);
    }
    HttpServerOptions options =
        new HttpServerOptions()
            .setHost(host)
            .setPort(port)
            .setIdleTimeout((int) idleTimeout.toSeconds())
            .setIdleTimeoutUnit(TimeUnit.SECONDS)
            .setHttp2ClearTextEnabled(false);
    return vertx
        .createHttpServer(options)
        .requestHandler(router)
        .listen()
        .onSuccess(s -> server = s);
  }

  public int actualPort() {
    return server.actualPort();
  }
}
