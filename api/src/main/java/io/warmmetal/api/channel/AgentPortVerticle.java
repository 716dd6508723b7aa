package io.warmmetal.api.channel;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.ServerWebSocketHandshake;
import io.vertx.core.net.JdkSSLEngineOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.ext.web.Router;
import io.vertx.openapi.contract.OpenAPIContract;
import io.warmmetal.api.http.ConnectionCaps;
import io.warmmetal.api.http.ContractRouter;
import io.warmmetal.api.http.HttpLimits;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.SlowClients;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The agents' TLS port: TLS 1.3 with a server certificate from the API's CA; routes from {@code
 * agent-api.yaml}; the same limits as the API port (its own settings), a TLS handshake timeout, and
 * client certificates required for all but enrollment.
 *
 * <p>Why client certificates are requested at the TLS layer and required at the HTTP layer:
 * enrollment is how an agent gets its certificate, so the handshake cannot demand one
 * (ClientAuth.REQUIRED would lock out every new server), and a second port just for enrollment
 * would be one more thing to expose through the load balancer. So the handshake asks for a
 * certificate and fails on one the CA did not issue (ClientAuth.REQUEST), and a connection without
 * one may only enroll: any other request is a 401 in the error shape, the channel's WebSocket
 * upgrade a 401, and it gets one request before it is closed. Connections with a verified
 * certificate (agents renewing, or holding the channel) do not count toward the per-address cap — a
 * load balancer may show a whole fleet from one address — while connections without one
 * (enrollments, and anything that has not finished its handshake) do.
 */
public final class AgentPortVerticle extends VerticleBase {
  private static final int BODY_LIMIT = 64 * 1024;

  /**
   * What an agent without a certificate legitimately calls: enrollment, which hands the certificate
   * out.
   */
  private static final Set<String> WITHOUT_CERTIFICATE = Set.of("/v1/enroll");

  /**
   * The agent port's TLS material, PEM: its key, its certificate chain (leaf then CA), the CA to
   * trust.
   */
  public record TlsMaterial(String keyPem, String chainPem, String caPem) {}

  private final OpenAPIContract contract;
  private final String host;
  private final int port;
  private final TlsMaterial tls;
  private final SlowClients slowClients;
  private final Duration handshakeTimeout;
  private final Consumer<Operations> mountOperations;
  private final Handler<ServerWebSocketHandshake> channel;
  private HttpServer server;

  /**
   * The agent port's limits and connection counts, shared by every instance of the verticle (one
   * per event loop): the caps are the port's, not a loop's.
   *
   * @param maxPerCertificate open connections with one client certificate at most (an agent needs
   *     its channel and a few requests)
   */
  public static SlowClients limits(HttpLimits limits, int maxPerCertificate) {
    return new SlowClients("agent port", limits)
        .requiringClientCertificates(WITHOUT_CERTIFICATE, maxPerCertificate);
  }

  /**
   * @param slowClients the port's {@link #limits}
   * @param handshakeTimeout how long a connection may take to complete its TLS handshake
   */
  public AgentPortVerticle(
      OpenAPIContract contract,
      String host,
      int port,
      TlsMaterial tls,
      SlowClients slowClients,
      Duration handshakeTimeout,
      Consumer<Operations> mountOperations,
      Handler<ServerWebSocketHandshake> channel) {
    this.contract = contract;
    this.host = host;
    this.port = port;
    this.tls = tls;
    this.slowClients = slowClients;
    this.handshakeTimeout = handshakeTimeout;
    this.mountOperations = mountOperations;
    this.channel = channel;
  }

  @Override
  public Future<?> start() {
    Router router =
        ContractRouter.create(
            vertx, contract, BODY_LIMIT, slowClients.rootHandlers(), mountOperations);
    slowClients.timeBodies(router, Integer.MIN_VALUE);
    HttpServerOptions options =
        slowClients.apply(
            new HttpServerOptions()
                .setHost(host)
                .setPort(port)
                .setSsl(true)
                .setEnabledSecureTransportProtocols(Set.of("TLSv1.3"))
                .setKeyCertOptions(
                    new PemKeyCertOptions()
                        .addKeyValue(Buffer.buffer(tls.keyPem()))
                        .addCertValue(Buffer.buffer(tls.chainPem())))
                .setTrustOptions(new PemTrustOptions().addCertValue(Buffer.buffer(tls.caPem())))
                .setClientAuth(ClientAuth.REQUEST)
                .setSslHandshakeTimeout(handshakeTimeout.toMillis())
                .setSslHandshakeTimeoutUnit(TimeUnit.MILLISECONDS)
                // The handshakes' signatures and certificate checks on worker threads, not the
                // event loops: a replica
                // taking over thousands of agents at once would otherwise do them one after
                // another, slower than the agents'
                // handshake timeout, and none would get through.
                .setSslEngineOptions(new JdkSSLEngineOptions().setUseWorkerThread(true)));
    HttpServer http =
        vertx
            .createHttpServer(options)
            .webSocketHandshakeHandler(slowClients.webSocketHandshakes(channel))
            .webSocketHandler(ws -> {}); // accepted sockets are wired by the handshake handler
    return slowClients.listen(http, router).onSuccess(s -> server = s);
  }

  public int actualPort() {
    return server.actualPort();
  }

  /** The port's open connections and refusals. */
  public ConnectionCaps connections() {
    return slowClients.connections();
  }
}
