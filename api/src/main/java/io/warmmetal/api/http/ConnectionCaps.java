package io.warmmetal.api.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.util.AttributeKey;
import io.vertx.core.Future;
import io.vertx.core.http.HttpServer;
import java.lang.reflect.Field;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A port's open connections, capped in total and per client address (an IPv6 client: its /64, which
 * one host usually has whole), counted from the moment the socket is accepted. One beyond a cap is
 * closed at once, unanswered.
 *
 * <p>Counting starts at accept, not in Vert.x's connection handler, because on a TLS port that
 * handler runs only once the handshake is done: sockets that never start (or never finish) their
 * handshake would escape the caps and could use up the process's file descriptors. Vert.x has no
 * hook there, so the counter sits in the listening socket's own pipeline, ahead of the handler that
 * registers accepted sockets ({@link #install}).
 *
 * <p>One instance per port, shared by its event loops (and the acceptor thread).
 */
public final class ConnectionCaps {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionCaps.class);
  private static final String HANDLER = "warmmetal.connectionCaps";

  /** The address a connection holds a per-address slot for; cleared when it gives the slot back. */
  private static final AttributeKey<InetAddress> ADDRESS_SLOT =
      AttributeKey.valueOf("warmmetal.addressSlot");

  private static final long LOG_INTERVAL_MILLIS = 60_000;

  private final String port;
  private final int max;
  private final int maxPerAddress;
  private final AtomicInteger open = new AtomicInteger();
  private final ConcurrentHashMap<InetAddress, Integer> perAddress = new ConcurrentHashMap<>();
  private final AtomicLong refused = new AtomicLong();
  private final AtomicInteger refusedUnlogged = new AtomicInteger();
  private final AtomicLong lastLogged = new AtomicLong(Long.MIN_VALUE / 2);
  private final Admission admission = new Admission();

  /**
   * @param port the port's name in log lines, e.g. "API port"
   */
  public ConnectionCaps(String port, int max, int maxPerAddress) {
    this.port = port;
    this.max = max;
    this.maxPerAddress = maxPerAddress;
  }

  /** Connections open now. */
  public int open() {
    return open.get();
  }

  /** Connections refused by a cap since the start. */
  public long refused() {
    return refused.get();
  }

  /**
   * Starts counting the server's accepted sockets. The port's verticles share one listening socket:
   * the first call installs the counter, the others find it there.
   */
  void install(HttpServer server) {
    ChannelPipeline pipeline = listeningSocket(server).pipeline();
    synchronized (pipeline) {
      if (pipeline.get(HANDLER) == null) {
        pipeline.addFirst(HANDLER, admission);
      }
    }
  }

  /**
   * Gives back the connection's per-address slot: it has shown who it is (a verified client
   * certificate).
   */
  void exemptFromAddressCap(Channel channel) {
    InetAddress address = channel.attr(ADDRESS_SLOT).getAndSet(null);
    if (address != null) {
      perAddress.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
    }
  }

  /** Counts the accepted socket in, or refuses it (uncounted) when a cap is reached. */
  private boolean admit(Channel child) {
    InetAddress address = addressOf(child);
    if (open.incrementAndGet() > max) {
      open.decrementAndGet();
      refuse(address, "the port's cap of " + max + " open connections is reached");
      return false;
    }
    if (address != null) {
      boolean[] full = new boolean[1];
      perAddress.compute(
          address,
          (a, n) -> {
            int count = n == null ? 0 : n;
            full[0] = count >= maxPerAddress;
            return full[0] ? n : count + 1;
          });
      if (full[0]) {
        open.decrementAndGet();
        refuse(
            address,
            "the cap of " + maxPerAddress + " open connections from one address is reached");
        return false;
      }
      child.attr(ADDRESS_SLOT).set(address);
    }
    child
        .closeFuture()
        .addListener(
            f -> {
              exemptFromAddressCap(child);
              open.decrementAndGet();
            });
    return true;
  }

  /** A WARN a minute at most while connections are refused, with how many were. */
  private void refuse(InetAddress address, String why) {
    refused.incrementAndGet();
    refusedUnlogged.incrementAndGet();
    long now = System.currentTimeMillis();
    long last = lastLogged.get();
    if (now - last >= LOG_INTERVAL_MILLIS && lastLogged.compareAndSet(last, now)) {
      LOG.warn(
          "{}: refused {} connection(s) since the last such line; the latest, from {}: {}",
          port,
          refusedUnlogged.getAndSet(0),
          address == null ? "?" : address.getHostAddress(),
          why);
    }
  }

  /**
   * The address a connection counts under: its IP, or for IPv6 its /64; null if it has none (a Unix
   * socket).
   */
  static InetAddress addressOf(Channel child) {
    if (!(child.remoteAddress() instanceof InetSocketAddress remote)
        || remote.getAddress() == null) {
      return null;
    }
    InetAddress address = remote.getAddress();
    if (!(address instanceof Inet6Address)) {
      return address;
    }
    byte[] prefix = address.getAddress();
    Arrays.fill(prefix, 8, 16, (byte) 0);
    try {
      return InetAddress.getByAddress(prefix);
    } catch (UnknownHostException impossible) {
      throw new IllegalStateException(impossible);
    }
  }

  /** Sees each accepted socket before the server bootstrap registers it. */
  @Sharable
  private final class Admission extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof Channel child && !admit(child)) {
        child
            .unsafe()
            .closeForcibly(); // not registered yet: closed as Netty closes a socket it cannot
        // register
        return;
      }
      ctx.fireChannelRead(msg);
    }
  }

  /**
   * The Netty channel the server listens on (the one all verticles on the port share). Vert.x keeps
   * it private: {@code HttpServerImpl.tcpServer} → {@code NetServerImpl.actualServer} (the server
   * that bound the socket) → {@code bindFuture}. A Vert.x that moved them fails the start here,
   * loudly, rather than run without caps.
   */
  @SuppressWarnings("unchecked")
  private Channel listeningSocket(HttpServer server) {
    try {
      Object tcpServer = field(server, "tcpServer");
      Object bound = field(tcpServer, "actualServer");
      Channel channel = ((Future<Channel>) field(bound, "bindFuture")).result();
      if (channel == null) {
        throw new IllegalStateException("the server is not listening");
      }
      return channel;
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new IllegalStateException(
          "Cannot reach the listening socket of the "
              + port
              + " to cap its connections (a Vert.x upgrade that changed its internals?)",
          e);
    }
  }

  private static Object field(Object target, String name) throws ReflectiveOperationException {
    for (Class<?> c = target.getClass(); c != null; c = c.getSuperclass()) {
      try {
        Field field = c.getDeclaredField(name);
        field.setAccessible(true);
        return field.get(target);
      } catch (NoSuchFieldException next) {
        // declared further up
      }
    }
    throw new NoSuchFieldException(target.getClass().getName() + "." + name);
  }
}
