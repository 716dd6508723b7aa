package io.warmmetal.api.testing;

import io.vertx.core.json.JsonObject;
import io.warmmetal.agent.enrollment.AgentIdentity;
import io.warmmetal.protocol.CaPin;
import io.warmmetal.protocol.PinnedTrustManager;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedKeyManager;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/**
 * HTTP/1.1 over raw sockets (plain, or TLS with or without a client certificate), byte by byte if
 * need be: what a slow or hostile client does, which no HTTP client library will.
 */
public final class RawHttp {
  private static final Pattern CONTENT_LENGTH = Pattern.compile("(?i)content-length: *(\\d+)");

  private RawHttp() {}

  /**
   * A plain connection to a loopback port, from {@code from} (any 127.0.0.0/8 address), reads
   * polling every 100 ms.
   */
  public static Socket connect(int port, String from) throws IOException {
    Socket s = new Socket();
    s.bind(new InetSocketAddress(InetAddress.getByName(from), 0));
    s.connect(new InetSocketAddress("127.0.0.1", port));
    s.setSoTimeout(100);
    return s;
  }

  public static Socket connect(int port) throws IOException {
    return connect(port, "127.0.0.1");
  }

  /**
   * A TLS connection to the agent port, handshake done: it trusts the CA by its pin, and presents
   * {@code identity}'s client certificate if one is given.
   */
  public static SSLSocket connectTls(int port, String from, CaPin pin, AgentIdentity identity)
      throws Exception {
    return startTls(connect(port, from), pin, identity);
  }

  /** TLS over a connection already open, handshake done, as {@link #connectTls}. */
  public static SSLSocket startTls(Socket plain, CaPin pin, AgentIdentity identity)
      throws Exception {
    SSLContext context = SSLContext.getInstance("TLSv1.3");
    context.init(
        identity == null ? null : keyManagers(identity),
        new TrustManager[] {new PinnedTrustManager(pin)},
        null);
    SSLSocket s =
        (SSLSocket)
            context.getSocketFactory().createSocket(plain, "127.0.0.1", plain.getPort(), true);
    s.setSoTimeout(5000);
    s.startHandshake();
    s.setSoTimeout(100);
    return s;
  }

  private static KeyManager[] keyManagers(AgentIdentity identity) throws Exception {
    PrivateKey key;
    try (PEMParser pem = new PEMParser(new StringReader(identity.keyPem()))) {
      key = new JcaPEMKeyConverter().getPrivateKey((PrivateKeyInfo) pem.readObject());
    }
    Certificate[] chain =
        CertificateFactory.getInstance("X.509")
            .generateCertificates(
                new ByteArrayInputStream(
                    identity.certificatePem().getBytes(StandardCharsets.US_ASCII)))
            .toArray(Certificate[]::new);
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    char[] password = "test".toCharArray();
    store.setKeyEntry("agent", key, password, chain);
    KeyManagerFactory factory =
        KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    factory.init(store, password);
    return new KeyManager[] {new Insistent((X509ExtendedKeyManager) factory.getKeyManagers()[0])};
  }

  /**
   * Presents its one certificate whatever CAs the server says it accepts, as a hostile client
   * would.
   */
  private static final class Insistent extends X509ExtendedKeyManager {
    private final X509ExtendedKeyManager keys;

    Insistent(X509ExtendedKeyManager keys) {
      this.keys = keys;
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
      return "agent";
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
      return "agent";
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
      return new String[] {"agent"};
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
      return keys.getCertificateChain(alias);
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
      return keys.getPrivateKey(alias);
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
      return null;
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
      return null;
    }
  }

  public static void send(Socket s, String text) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(text.getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  /**
   * Sends a byte about every 300 ms until the server closes the connection; the milliseconds from
   * the first byte to the close. Fails if it is still open after the limit.
   */
  public static long trickleUntilClosed(Socket s, int limitSeconds) throws Exception {
    long started = System.nanoTime();
    while (elapsedMillis(started) < limitSeconds * 1000L) {
      try {
        send(s, "a");
        if (s.getInputStream().read() < 0) {
          return elapsedMillis(started);
        }
      } catch (SocketTimeoutException stillOpen) {
        Thread.sleep(200);
      } catch (IOException reset) {
        return elapsedMillis(started);
      }
    }
    throw new AssertionError(
        "the connection is still open after " + limitSeconds + "s of trickling");
  }

  /**
   * Everything the server sends until it closes the connection; fails if it is still open after the
   * limit.
   */
  public static String readUntilClosed(Socket s, int limitSeconds) throws IOException {
    long deadline = System.nanoTime() + limitSeconds * 1_000_000_000L;
    InputStream in = s.getInputStream();
    StringBuilder text = new StringBuilder();
    byte[] buf = new byte[4096];
    while (System.nanoTime() < deadline) {
      int n;
      try {
        n = in.read(buf);
      } catch (SocketTimeoutException stillOpen) {
        continue;
      } catch (IOException reset) {
        return text.toString();
      }
      if (n < 0) {
        return text.toString();
      }
      text.append(new String(buf, 0, n, StandardCharsets.UTF_8));
    }
    throw new AssertionError(
        "the connection is still open after " + limitSeconds + "s; read: " + text);
  }

  /** One response with a Content-Length, the connection left open. */
  public static String readResponse(Socket s) throws IOException {
    long deadline = System.nanoTime() + 5_000_000_000L;
    InputStream in = s.getInputStream();
    StringBuilder text = new StringBuilder();
    byte[] buf = new byte[4096];
    while (System.nanoTime() < deadline) {
      int headersEnd = text.indexOf("\r\n\r\n");
      if (headersEnd >= 0) {
        Matcher m = CONTENT_LENGTH.matcher(text);
        if (m.find() && text.length() >= headersEnd + 4 + Integer.parseInt(m.group(1))) {
          return text.toString();
        }
      }
      try {
        int n = in.read(buf);
        if (n < 0) {
          break;
        }
        text.append(new String(buf, 0, n, StandardCharsets.UTF_8));
      } catch (SocketTimeoutException notYet) {
        // read on
      }
    }
    throw new AssertionError("no complete response: " + text);
  }

  /**
   * A port's open connections as {@code /metrics} on the management port says ({@code port}: api,
   * agents, management); the connection asking counts under management.
   */
  public static int openConnections(int metricsPort, String port) {
    return (int) metric(metricsPort, "warmmetal_connections_open", port);
  }

  /** The connections a port's caps refused so far, as {@code /metrics} says. */
  public static long refusedConnections(int metricsPort, String port) {
    return metric(metricsPort, "warmmetal_connections_refused_total", port);
  }

  /**
   * A port's open connections as {@code /metrics} says, asked over {@code keptOpen}, a connection
   * to the management port that stays open (and counts under management).
   */
  public static int openConnections(Socket keptOpen, String port) throws IOException {
    send(keptOpen, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    return (int) metric(readResponse(keptOpen), "warmmetal_connections_open", port);
  }

  private static long metric(int metricsPort, String name, String port) {
    try (Socket s = connect(metricsPort, "127.0.0.1")) {
      send(s, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
      return metric(readUntilClosed(s, 5), name, port);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static long metric(String answer, String name, String port) {
    Matcher m = Pattern.compile(name + "\\{port=\"" + port + "\"} ([0-9.]+)").matcher(answer);
    if (!m.find()) {
      throw new AssertionError("no " + name + " for " + port + " in " + answer);
    }
    return (long) Double.parseDouble(m.group(1));
  }

  /** The server closes the connection at once, without a word. */
  public static void assertClosedAtOnce(Socket beyond) throws IOException {
    try (beyond) {
      long started = System.nanoTime();
      if (!readUntilClosed(beyond, 5).isEmpty() || elapsedMillis(started) >= 1000) {
        throw new AssertionError("not closed at once, unanswered");
      }
    }
  }

  public static void closeAll(List<Socket> sockets) throws IOException {
    for (Socket s : sockets) {
      s.close();
    }
  }

  /** The response's JSON body. */
  public static JsonObject body(String response) {
    return new JsonObject(response.substring(response.indexOf("\r\n\r\n") + 4).trim());
  }

  public static long elapsedMillis(long startedNanos) {
    return (System.nanoTime() - startedNanos) / 1_000_000;
  }
}
