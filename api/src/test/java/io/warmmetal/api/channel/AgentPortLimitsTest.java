package io.warmmetal.api.channel;

import static io.warmmetal.api.testing.RawHttp.assertClosedAtOnce;
import static io.warmmetal.api.testing.RawHttp.body;
import static io.warmmetal.api.testing.RawHttp.closeAll;
import static io.warmmetal.api.testing.RawHttp.elapsedMillis;
import static io.warmmetal.api.testing.RawHttp.readResponse;
import static io.warmmetal.api.testing.RawHttp.readUntilClosed;
import static io.warmmetal.api.testing.RawHttp.send;
import static io.warmmetal.api.testing.RawHttp.trickleUntilClosed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.TrustOptions;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.agent.enrollment.AgentIdentity;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.RawHttp;
import io.warmmetal.protocol.PinnedTrustManager;
import io.warmmetal.protocol.channel.Channel;
import io.warmmetal.protocol.channel.Frame;
import io.warmmetal.protocol.channel.Heartbeat;
import io.warmmetal.protocol.channel.Hello;
import io.warmmetal.protocol.channel.Welcome;
import io.warmmetal.protocol.testing.Await;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLSocket;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The agents' TLS port against slow, piled-up and unknown clients, with raw sockets: a connection
 * that never handshakes, or handshakes and sends nothing, or trickles its headers (on its first
 * request or a later one) is closed; caps hold per address (for connections without a client
 * certificate), per client certificate and in total; without a client certificate only enrollment
 * is answered, once per connection; and the channel's WebSocket is not cut by the HTTP idle
 * timeout.
 */
@ExtendWith(VertxExtension.class)
class AgentPortLimitsTest {
  private static final int HANDSHAKE_SECONDS = 3;
  private static final int HEADER_SECONDS = 2;
  private static final int IDLE_SECONDS = 2;
  private static final int CAP = 8;
  private static final int CAP_PER_ADDRESS = 3;
  private static final int CAP_PER_CERTIFICATE = 3;

  private static ApiFixture fx;
  private static Enrollment enrollment;
  private static String token;
  private static AgentIdentity identity;

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    fx =
        ApiFixture.start(
            vertx,
            Map.of(
                "WARMMETAL_AGENT_HANDSHAKE_TIMEOUT_SECONDS", Integer.toString(HANDSHAKE_SECONDS),
                "WARMMETAL_AGENT_HEADER_TIMEOUT_SECONDS", Integer.toString(HEADER_SECONDS),
                "WARMMETAL_AGENT_BODY_TIMEOUT_SECONDS", "1",
                "WARMMETAL_AGENT_IDLE_TIMEOUT_SECONDS", Integer.toString(IDLE_SECONDS),
                "WARMMETAL_AGENT_MAX_CONNECTIONS", Integer.toString(CAP),
                "WARMMETAL_AGENT_MAX_CONNECTIONS_PER_ADDRESS", Integer.toString(CAP_PER_ADDRESS),
                "WARMMETAL_AGENT_MAX_CONNECTIONS_PER_CERTIFICATE",
                    Integer.toString(CAP_PER_CERTIFICATE),
                "WARMMETAL_HEARTBEAT_SECONDS", "3",
                "WARMMETAL_OFFLINE_AFTER_SECONDS", "30"));
    enrollment =
        new Enrollment(
            vertx, URI.create("https://127.0.0.1:" + fx.api.agentPort()), fx.api.caPin());
    token =
        fx.client
            .post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject().put("uses", 10))
            .body()
            .getString("token");
    identity = enroll();
  }

  @AfterAll
  static void stop() {
    enrollment.close().await();
    fx.close();
  }

  /** Enrollment, over a connection without a client certificate. */
  private static AgentIdentity enroll() {
    return enrollment
        .enroll(
            token,
            new JsonObject()
                .put("name", "limits-" + UUID.randomUUID().toString().substring(0, 8))
                .put("facts", ApiFixture.facts(4, 8))
                .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString())))
        .await();
  }

  private static Socket connect(String from) throws IOException {
    return RawHttp.connect(fx.api.agentPort(), from);
  }

  private static SSLSocket connectTls(String from, AgentIdentity as) throws Exception {
    return RawHttp.connectTls(fx.api.agentPort(), from, fx.api.caPin(), as);
  }

  @Test
  void aConnectionThatNeverStartsItsTlsHandshakeIsClosedAtTheHandshakeTimeout() throws Exception {
    try (Socket s = connect("127.0.0.1")) {
      long started = System.nanoTime();
      assertThat(readUntilClosed(s, HANDSHAKE_SECONDS + 5)).isEmpty();
      assertThat(elapsedMillis(started))
          .isBetween(HANDSHAKE_SECONDS * 1000L - 500, HANDSHAKE_SECONDS * 1000L + 3000);
    }
  }

  @Test
  void aHandshakeFollowedByNothingIsClosedAtTheHeaderTimeout() throws Exception {
    try (SSLSocket s = connectTls("127.0.0.1", null)) {
      long started = System.nanoTime();
      assertThat(readUntilClosed(s, HEADER_SECONDS + 5)).isEmpty();
      assertThat(elapsedMillis(started))
          .isBetween(HEADER_SECONDS * 1000L - 500, HEADER_SECONDS * 1000L + 3000);
    }
  }

  @Test
  void tricklingTheFirstRequestsHeadersIsClosedAtTheHeaderTimeout() throws Exception {
    try (SSLSocket s = connectTls("127.0.0.1", null)) {
      send(s, "POST /v1/enroll HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      assertThat(trickleUntilClosed(s, HEADER_SECONDS + 5))
          .isBetween(HEADER_SECONDS * 1000L - 500, HEADER_SECONDS * 1000L + 1500);
    }
  }

  @Test
  void anAgentsKeepAliveConnectionWhoseNextRequestTricklesIsClosedAHeaderTimeoutAfterItsFirstByte()
      throws Exception {
    try (SSLSocket s = connectTls("127.0.0.1", identity)) {
      send(s, renewWithoutCsr());
      String answer = readResponse(s);
      assertThat(answer)
          .as(answer)
          .startsWith("HTTP/1.1 400"); // past the certificate check: validation
      Thread.sleep(
          1000); // idle less than the idle timeout: the next request's clock starts at its first
      // byte
      send(s, "POST /v1/renew HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      assertThat(trickleUntilClosed(s, HEADER_SECONDS + 5))
          .isBetween(HEADER_SECONDS * 1000L - 500, HEADER_SECONDS * 1000L + 1500);
    }
  }

  @Test
  void anAgentsIdleKeepAliveConnectionIsClosedAtTheIdleTimeout() throws Exception {
    try (SSLSocket s = connectTls("127.0.0.1", identity)) {
      send(s, renewWithoutCsr());
      assertThat(readResponse(s)).startsWith("HTTP/1.1 400");
      long started = System.nanoTime();
      assertThat(readUntilClosed(s, IDLE_SECONDS + 5)).isEmpty();
      assertThat(elapsedMillis(started))
          .isBetween(IDLE_SECONDS * 1000L - 500, IDLE_SECONDS * 1000L + 3000);
    }
  }

  @Test
  void withoutAClientCertificateAnythingButEnrollmentIs401InTheErrorShapeAndTheConnectionCloses()
      throws Exception {
    for (String request :
        List.of(renewWithoutCsr(), "GET /v1/anything HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")) {
      try (SSLSocket s = connectTls("127.0.0.1", null)) {
        send(s, request);
        String answer = readUntilClosed(s, 5); // one answer, then closed
        assertThat(answer)
            .as(answer)
            .startsWith("HTTP/1.1 401")
            .containsIgnoringCase("connection: close");
        JsonObject error = body(answer);
        assertThat(error.getString("code")).isEqualTo("Unauthorized");
        assertThat(error.getString("requestId")).isNotBlank();
      }
    }
    try (SSLSocket s = connectTls("127.0.0.1", null)) {
      send(
          s,
          "GET "
              + Channel.PATH
              + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
      assertThat(readUntilClosed(s, 5)).startsWith("HTTP/1.1 401");
    }
  }

  @Test
  void aClientCertificateAnotherCaIssuedFailsTheHandshake() throws Exception {
    CertificateAuthority other =
        CertificateAuthority.loadOrCreate(
            Files.createTempDirectory("other-ca"), Optional.empty(), Optional.empty());
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"));
    KeyPair keys = generator.generateKeyPair();
    X509Certificate foreign =
        other.signAgent(
            new JcaPKCS10CertificationRequestBuilder(new X500Name("CN=x"), keys.getPublic())
                .build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())),
            identity.machineId(),
            Duration.ofDays(1));
    AgentIdentity impostor =
        new AgentIdentity(
            identity.machineId(),
            CertificateAuthority.pem(keys.getPrivate()),
            CertificateAuthority.pem(foreign),
            identity.caPem());
    String answer;
    try (SSLSocket s = connectTls("127.0.0.1", impostor)) {
      send(
          s, renewWithoutCsr()); // TLS 1.3: the server's verdict on the certificate comes after the
      // client's Finished
      answer = readUntilClosed(s, 5);
    } catch (IOException refused) {
      answer = "";
    }
    assertThat(answer).as("no HTTP answer at all: the handshake failed").isEmpty();
  }

  @Test
  void enrollmentNeedsNoClientCertificateAndGetsOneRequestPerConnection() throws Exception {
    assertThat(enroll().machineId()).isNotBlank();
    try (SSLSocket s = connectTls("127.0.0.1", null)) {
      String json =
          new JsonObject()
              .put("csr", "x")
              .put("name", "n")
              .put("facts", ApiFixture.facts(1, 1))
              .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()))
              .encode();
      send(
          s,
          "POST /v1/enroll HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wme_not-a-token\r\n"
              + "Content-Type: application/json\r\nContent-Length: "
              + json.length()
              + "\r\n\r\n"
              + json);
      String answer = readUntilClosed(s, 5); // answered by enrollment itself, then closed
      assertThat(answer)
          .as(answer)
          .matches("(?s)HTTP/1.1 4\\d\\d .*")
          .containsIgnoringCase("connection: close");
      assertThat(body(answer).getString("code")).isNotBlank();
    }
  }

  @Test
  void anExpectationOtherThan100ContinueIs417InTheErrorShapeWithoutACertificate() throws Exception {
    try (SSLSocket s = connectTls("127.0.0.1", null)) {
      send(
          s,
          "POST /v1/enroll HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: foo\r\nContent-Type: application/json\r\n"
              + "Content-Length: 2\r\n\r\n{}");
      String answer = readUntilClosed(s, 5);
      assertThat(answer).as(answer).startsWith("HTTP/1.1 417");
      assertThat(body(answer).getString("code")).isEqualTo("ExpectationFailed");
    }
  }

  @Test
  void anUnknownHttpVersionIs505InTheErrorShapeWithOrWithoutACertificate() throws Exception {
    for (AgentIdentity as : Arrays.asList(null, identity)) {
      try (SSLSocket s = connectTls("127.0.0.1", as)) {
        send(s, "GET " + Channel.PATH + " HTTP/1.2\r\nHost: 127.0.0.1\r\n\r\n");
        String answer = readUntilClosed(s, 5); // answered, then closed
        assertThat(answer).as(answer).startsWith("HTTP/1.1 505");
        JsonObject error = body(answer);
        assertThat(error.getString("code")).isEqualTo("HttpVersionNotSupported");
        assertThat(error.getString("requestId")).isNotBlank();
      }
    }
  }

  @Test
  void uncertifiedConnectionsFromOneAddressAreCappedButAgentsWithCertificatesAreNot()
      throws Exception {
    awaitNoConnections();
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) { // agents behind one address (a load balancer's), served...
        SSLSocket agent = connectTls("127.0.0.2", identity);
        held.add(agent);
        send(agent, renewWithoutCsr());
        assertThat(readResponse(agent)).startsWith("HTTP/1.1 400");
      }
      for (int i = 0; i < CAP_PER_ADDRESS; i++) {
        held.add(
            connect(
                "127.0.0.2")); // ...beside as many connections without a certificate as one address
        // may have
      }
      assertClosedAtOnce(connect("127.0.0.2"));
      // The last one within the cap was let in: it is served (its one request, without a
      // certificate).
      try (SSLSocket last = RawHttp.startTls(held.get(held.size() - 1), fx.api.caPin(), null)) {
        send(last, renewWithoutCsr());
        assertThat(readUntilClosed(last, 5)).startsWith("HTTP/1.1 401");
      }
      try (SSLSocket other = connectTls("127.0.0.3", null)) { // another address is served
        send(other, renewWithoutCsr());
        assertThat(readUntilClosed(other, 5)).startsWith("HTTP/1.1 401");
      }
      send(held.get(0), renewWithoutCsr());
      assertThat(readResponse(held.get(0))).startsWith("HTTP/1.1 400");
    } finally {
      closeAll(held);
    }
  }

  @Test
  void oneCertificatesConnectionsBeyondItsCapAreClosedWhileAnotherCertificateStillConnects()
      throws Exception {
    awaitNoConnections();
    long refusedBefore = RawHttp.refusedConnections(fx.api.metricsPort(), "agents");
    AgentIdentity another = enroll();
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < CAP_PER_CERTIFICATE; i++) {
        // From as many addresses: the cap follows the certificate, wherever it connects from.
        SSLSocket agent = connectTls("127.0.2." + (i + 1), identity);
        held.add(agent);
        send(agent, renewWithoutCsr());
        assertThat(readResponse(agent)).startsWith("HTTP/1.1 400");
      }
      assertThat(answerWith(identity, "127.0.2.9"))
          .as("closed once the handshake showed the certificate, unanswered")
          .isEmpty();
      Await.until(
          "the refusal counted",
          () -> RawHttp.refusedConnections(fx.api.metricsPort(), "agents") == refusedBefore + 1);
      assertThat(answerWith(another, "127.0.2.1")).startsWith("HTTP/1.1 400");
      send(held.get(0), renewWithoutCsr());
      assertThat(readResponse(held.get(0))).startsWith("HTTP/1.1 400");
      held.remove(0).close();
      Await.until(
          "the closed connection gone",
          () -> RawHttp.openConnections(fx.api.metricsPort(), "agents") == held.size());
      assertThat(answerWith(identity, "127.0.2.9"))
          .as("a closed connection gives its slot back")
          .startsWith("HTTP/1.1 400");
    } finally {
      closeAll(held);
    }
  }

  /** What the agents' port answers a renewal without a CSR, over a new connection as {@code as}. */
  private static String answerWith(AgentIdentity as, String from) throws Exception {
    try (SSLSocket s = connectTls(from, as)) {
      send(s, renewWithoutCsr().replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"));
      return readUntilClosed(s, 5);
    } catch (IOException refused) {
      return ""; // closed before the handshake was through, on the client's side
    }
  }

  @Test
  void connectionsBeyondTheTotalCapAreClosedAtOnceWhileTheOthersAreServed() throws Exception {
    awaitNoConnections();
    List<Socket> held = new ArrayList<>();
    try {
      held.add(connectTls("127.0.1.1", identity));
      for (int i = 1; i < CAP; i++) {
        held.add(connect("127.0.1." + (i % 3 + 2))); // within each address's cap
      }
      assertClosedAtOnce(connect("127.0.1.9"));
      long started =
          System.nanoTime(); // agents too: the total counts everyone, before their handshake
      assertThatThrownBy(() -> connectTls("127.0.1.1", identity)).isInstanceOf(IOException.class);
      assertThat(elapsedMillis(started)).as("closed at once").isLessThan(1000);
      send(held.get(0), renewWithoutCsr());
      assertThat(readResponse(held.get(0))).startsWith("HTTP/1.1 400");
    } finally {
      closeAll(held);
    }
  }

  @Test
  void aHeartbeatingChannelOutlivesTheHttpIdleTimeout(Vertx vertx) throws Exception {
    WebSocketClient client =
        vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
    try {
      WebSocket channel =
          client
              .connect(
                  new WebSocketConnectOptions()
                      .setHost("127.0.0.1")
                      .setPort(fx.api.agentPort())
                      .setURI(Channel.PATH)
                      .setSsl(true)
                      .setSslOptions(
                          new ClientSSLOptions()
                              .setKeyCertOptions(
                                  new PemKeyCertOptions()
                                      .addKeyValue(Buffer.buffer(identity.keyPem()))
                                      .addCertValue(Buffer.buffer(identity.certificatePem())))
                              .setTrustOptions(
                                  TrustOptions.wrap(new PinnedTrustManager(fx.api.caPin())))
                              .setHostnameVerificationAlgorithm("")))
              .await();
      Promise<Void> closed = Promise.promise();
      channel.closeHandler(v -> closed.tryComplete());
      Promise<String> welcome = Promise.promise();
      channel.textMessageHandler(welcome::tryComplete);
      channel.writeTextMessage(new Hello(0).encode());
      assertThat(Frame.parse(welcome.future().await())).isInstanceOf(Welcome.class);
      // Beats further apart than the idle timeout, for three of them: an HTTP connection this quiet
      // is closed.
      AtomicInteger beats = new AtomicInteger();
      long started = System.nanoTime();
      while (beats.get() < 3) {
        Thread.sleep(IDLE_SECONDS * 1000L + 500);
        assertThat(closed.future().isComplete()).as("closed after %d beats", beats.get()).isFalse();
        channel.writeTextMessage(new Heartbeat().encode()).await();
        beats.incrementAndGet();
      }
      assertThat(elapsedMillis(started)).isGreaterThan(3 * IDLE_SECONDS * 1000L);
      assertThat(closed.future().isComplete()).isFalse();
      assertThat(fx.api.channel().connectedAgents()).isEqualTo(1);
      channel.close().await();
    } finally {
      client.close().await();
    }
  }

  private static String renewWithoutCsr() {
    return "POST /v1/renew HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
        + "\r\n{}";
  }

  /** No connection is open on the agent port, as /metrics (on the management port) says. */
  private static void awaitNoConnections() throws InterruptedException {
    Await.until(
        "no connections open on the agent port",
        () -> RawHttp.openConnections(fx.api.metricsPort(), "agents") == 0);
  }
}
