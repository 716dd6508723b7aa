package io.warmmetal.api.testing;

import io.vertx.core.Vertx;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP forwarder on 127.0.0.1 in front of a real server (the database), which a test can cut —
 * listener closed and every open connection dropped, so clients see refused and reset connections
 * as in an outage — and restore on the same port.
 */
public final class TcpProxy implements AutoCloseable {
  private final Vertx vertx;
  private final String listenHost;
  private final String targetHost;
  private volatile int targetPort;
  private final NetClient client;
  private final Set<NetSocket> open = ConcurrentHashMap.newKeySet();
  private NetServer server;
  private int port;

  private TcpProxy(Vertx vertx, String listenHost, String targetHost, int targetPort) {
    this.vertx = vertx;
    this.listenHost = listenHost;
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.client = vertx.createNetClient();
  }

  public static TcpProxy start(Vertx vertx, String targetHost, int targetPort) {
    return start(vertx, "127.0.0.1", targetHost, targetPort);
  }

  /**
   * A proxy listening on {@code listenHost} (an address of a test's network namespace link, say).
   */
  public static TcpProxy start(Vertx vertx, String listenHost, String targetHost, int targetPort) {
    TcpProxy proxy = new TcpProxy(vertx, listenHost, targetHost, targetPort);
    proxy.listen(0);
    return proxy;
  }

  public int port() {
    return port;
  }

  /** The outage: nothing listens any more and every forwarded connection is closed. */
  public synchronized void cut() {
    server.close().await();
    server = null;
    open.forEach(NetSocket::close);
    open.clear();
  }

  /**
   * New connections go to {@code port} from now on (a server restarted elsewhere); open ones stay
   * as they are.
   */
  public void retarget(int port) {
    targetPort = port;
  }

  /** The database is back, on the same port. */
  public synchronized void restore() {
    listen(port);
  }

  private synchronized void listen(int onPort) {
    server =
        vertx.createNetServer(
            new NetServerOptions().setHost(listenHost).setPort(onPort).setReuseAddress(true));
    server.connectHandler(this::forward);
    port = server.listen().await().actualPort();
  }

  private void forward(NetSocket front) {
    front.pause();
    open.add(front);
    client
        .connect(targetPort, targetHost)
        .onComplete(
            ar -> {
              if (ar.failed()) {
                front.close();
                return;
              }
              NetSocket back = ar.result();
              open.add(back);
              front.pipeTo(back).onComplete(x -> back.close());
              back.pipeTo(front).onComplete(x -> front.close());
              front.closeHandler(v -> open.remove(front));
              back.closeHandler(v -> open.remove(back));
              front.resume();
            });
  }

  @Override
  public synchronized void close() {
    if (server != null) {
      server.close().await();
    }
    open.forEach(NetSocket::close);
    client.close().await();
  }
}
