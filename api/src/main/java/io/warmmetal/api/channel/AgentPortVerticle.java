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
import io.warmmetal.api.http.ContractRouter;
import io.warmmetal.api.http.Operations;

import java.util.List;
import java.util.function.Consumer;

/**
 * The agents' TLS port: TLS 1.3 with a server certificate from the API's CA, client certificates requested (the
 * channel requires one; enrollment, which hands them out, does not). Routes come from {@code agent-api.yaml}.
 */
public final class AgentPortVerticle extends VerticleBase {
  private static final int BODY_LIMIT = 64 * 1024;

  /** The agent port's TLS material, PEM: its key, its certificate chain (leaf then CA), the CA to trust. */
  public record TlsMaterial(String keyPem, String chainPem, String caPem) {}

  private final OpenAPIContract contract;
  private final String host;
  private final int port;
  private final TlsMaterial tls;
  private final Consumer<Operations> mountOperations;
  private final Handler<ServerWebSocketHandshake> channel;
  private HttpServer server;

  public AgentPortVerticle(OpenAPIContract contract, String host, int port, TlsMaterial tls,
      Consumer<Operations> mountOperations, Handler<ServerWebSocketHandshake> channel) {
    this.contract = contract;
    this.host = host;
    this.port = port;
    this.tls = tls;
    this.mountOperations = mountOperations;
    this.channel = channel;
  }

  @Override
  public Future<?> start() {
    Router router = ContractRouter.create(vertx, contract, BODY_LIMIT, List.of(), mountOperations);
    HttpServerOptions options = new HttpServerOptions()
        .setHost(host)
        .setPort(port)
        .setSsl(true)
        .setEnabledSecureTransportProtocols(java.util.Set.of("TLSv1.3"))
        .setKeyCertOptions(new PemKeyCertOptions()
            .addKeyValue(Buffer.buffer(tls.keyPem()))
            .addCertValue(Buffer.buffer(tls.chainPem())))
        .setTrustOptions(new PemTrustOptions().addCertValue(Buffer.buffer(tls.caPem())))
        .setClientAuth(ClientAuth.REQUEST)
        // The handshakes' signatures and certificate checks on worker threads, not this one event loop: a replica
        // taking over thousands of agents at once would otherwise do them one after another, slower than the agents'
        // handshake timeout, and none would get through.
        .setSslEngineOptions(new JdkSSLEngineOptions().setUseWorkerThread(true));
    return vertx.createHttpServer(options)
        .webSocketHandshakeHandler(channel)
        .webSocketHandler(ws -> { }) // accepted sockets are wired by the handshake handler
        .requestHandler(router)
        .listen()
        .onSuccess(s -> server = s);
  }

  public int actualPort() {
    return server.actualPort();
  }

}
