package io.warmmetal.api.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * {@code AgentPortProxy PORT...}: a TCP forwarder on 127.0.0.1 in front of API replicas' agent
 * ports, as the agents' load balancer: each new connection goes to the first replica (in the order
 * given) that accepts it, so every agent is on the first while it lives and on the next once it is
 * killed. TLS passes through untouched (the agents' mutual TLS is end to end). A process of its
 * own, so that its two sockets per agent count against its own descriptor limit, not the
 * benchmark's. Prints {@code listening <port>} once it is.
 */
public final class AgentPortProxy {
  private AgentPortProxy() {}

  public static void main(String[] args) throws Exception {
    List<Integer> replicas = Arrays.stream(args).map(Integer::parseInt).toList();
    Vertx vertx = Vertx.vertx();
    NetClient net = vertx.createNetClient();
    int port =
        vertx
            .createNetServer(
                new NetServerOptions().setHost("127.0.0.1").setPort(0).setAcceptBacklog(4096))
            .connectHandler(
                in -> {
                  in.pause();
                  firstLive(net, replicas, 0)
                      .onComplete(
                          ar -> {
                            if (ar.failed()) {
                              in.close();
                              return;
                            }
                            NetSocket out = ar.result();
                            in.pipeTo(out).onComplete(x -> out.close());
                            out.pipeTo(in).onComplete(x -> in.close());
                            in.resume();
                          });
                })
            .listen()
            .await()
            .actualPort();
    System.out.println("listening " + port);
    System.out.flush();
    new CountDownLatch(1).await(); // until killed
  }

  private static Future<NetSocket> firstLive(NetClient net, List<Integer> replicas, int index) {
    if (index == replicas.size()) {
      return Future.failedFuture("no replica accepts");
    }
    return net.connect(replicas.get(index), "127.0.0.1")
        .recover(err -> firstLive(net, replicas, index + 1));
  }
}
