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
import java.math.BigInteger;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.security.auth.x500.X500Principal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A port's open connections, capped in total and per client address (an IPv6 client: its /64, which
 * one host usually has whole), counted from the moment the socket is accepted. One beyond a cap is
 * closed at once, unanswered. On a port with client certificates, a connection whose TLS handshake
 * verified one counts under its certificate instead of its address ({@link #certified}).
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
  private final int maxPerCertificate;
  private final AtomicInteger open = new AtomicInteger();
  private final ConcurrentHashMap<InetAddress, Integer> perAddress = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<CertificateId, Integer> perCertificate =
      new ConcurrentHashMap<>();
  private final AtomicLong refused = new AtomicLong();
  private final AtomicInteger refusedUnlogged = new AtomicInteger();
  private final AtomicLong lastLogged = new AtomicLong(Long.MIN_VALUE / 2);
  private final Admission admission = new Admission();

  /**
   * @param port the port's name in log lines, e.g. "API port"
   */
  public ConnectionCaps(String port, int max, int maxPerAddress) {
    this(port, max, maxPerAddress, Integer.MAX_VALUE);
  }

  /**
   * @param maxPerCertificate open connections with one verified client certificate at most
   */
  public ConnectionCaps(String port, int max, int maxPerAddress, int maxPerCertificate) {
    this.port = port;
    this.max = max;
    this.maxPerAddress = maxPerAddress;
    this.maxPerCertificate = maxPerCertificate;
  }

  /** The same caps, and at most {@code maxPerCertificate} connections per client certificate. */
  ConnectionCaps withCertificateCap(int maxPerCertificate) {
    return new ConnectionCaps(port, max, maxPerAddress, maxPerCertificate);
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
   * The connection's TLS handshake verified its client certificate: it gives back its per-address
   * slot (many clients with certificates may share an address, behind a load balancer) and takes
   * one of the certificate's instead — or, when the certificate has its cap's worth of connections
   * open, is refused (counted as any refusal) and the caller closes it. Without this cap one
   * certificate, even a rejected machine's, could hold every connection the total cap allows.
   */
  boolean certified(Channel channel, X509Certificate certificate) {
    CertificateId id = CertificateId.of(certificate);
    if (!take(perCertificate, id, maxPerCertificate)) {
      refuse(
          addressOf(channel),
          "the cap of "
              + maxPerCertificate
              + " open connections with one client certificate is reached (serial "
              + id.serial().toString(16)
              + ")");
      return false;
    }
    // at once if the connection is already closed
    channel.closeFuture().addListener(f -> give(perCertificate, id));
    give(perAddress, channel.attr(ADDRESS_SLOT).getAndSet(null));
    return true;
  }

  /** A slot under {@code key}, unless it has {@code cap} already. */
  private static <K> boolean take(ConcurrentHashMap<K, Integer> counts, K key, int cap) {
    boolean[] full = new boolean[1];
    counts.compute(
        key,
        (k, n) -> {
          int count = n == null ? 0 : n;
          full[0] = count >= cap;
          return full[0] ? n : count + 1;
        });
    return !full[0];
  }

  private static <K> void give(ConcurrentHashMap<K, Integer> counts, K key) {
    if (key != null) {
      counts.computeIfPresent(key, (k, n) -> n <= 1 ? null : n - 1);
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
      if (!take(perAddress, address, maxPerAddress)) {
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
              give(perAddress, child.attr(ADDRESS_SLOT).getAndSet(null));
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

  /** A certificate as its issuer knows it: a CA never gives two the same serial. */
  private record CertificateId(X500Principal issuer, BigInteger serial) {
    static CertificateId of(X509Certificate certificate) {
      return new CertificateId(certificate.getIssuerX500Principal(), certificate.getSerialNumber());
    }
  }
}
