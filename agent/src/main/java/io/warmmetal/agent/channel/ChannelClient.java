package io.warmmetal.agent.channel;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.KeyCertOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.TrustOptions;
import io.warmmetal.agent.commands.CommandLog;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.commands.Outcome;
import io.warmmetal.agent.enrollment.AgentIdentity;
import io.warmmetal.protocol.CaPin;
import io.warmmetal.protocol.MalformedFrame;
import io.warmmetal.protocol.PinnedTrustManager;
import io.warmmetal.protocol.channel.Ack;
import io.warmmetal.protocol.channel.Channel;
import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.channel.Frame;
import io.warmmetal.protocol.channel.FrameType;
import io.warmmetal.protocol.channel.Heartbeat;
import io.warmmetal.protocol.channel.Hello;
import io.warmmetal.protocol.channel.Progress;
import io.warmmetal.protocol.channel.Result;
import io.warmmetal.protocol.channel.Welcome;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's one connection to the API: a WebSocket over mutual TLS (its client certificate; the
 * API verified against the CA it enrolled with). It says hello with the last command it took, runs
 * commands one at a time in seq order — each id at most once, by its {@link CommandLog} — reports
 * progress and results, resends results until they are acknowledged, beats at the interval the API
 * asks, and reconnects with jittered backoff whenever the connection drops. Everything runs on one
 * event loop.
 */
public final class ChannelClient {
  private static final Logger LOG = LoggerFactory.getLogger(ChannelClient.class);
  private static final long MAX_BACKOFF_MS = 30_000;

  private final Vertx vertx;
  private final WebSocketClient client;
  private final WebSocketConnectOptions connect;
  private final AgentIdentity identity;
  private final CommandLog log;
  private final Executor executor;
  private final Deque<Command> queue = new ArrayDeque<>();
  private WebSocket socket;
  private boolean running;
  private boolean stopped;
  private long heartbeatTimer = -1;
  private long backoffMs = 250;

  /**
   * The client key and certificate, decoded once: decoding the PEM for every connection costs a
   * password-based key derivation, which thousands of simulated agents reconnecting together (their
   * replica died) paid over and over on a few cores.
   */
  private final PemKeyCertOptions pem;

  private boolean keysDecoded;

  public ChannelClient(
      Vertx vertx,
      WebSocketClient client,
      URI api,
      AgentIdentity identity,
      CommandLog log,
      Executor executor) {
    this.vertx = vertx;
    this.client = client;
    this.identity = identity;
    this.log = log;
    this.executor = executor;
    this.pem =
        new PemKeyCertOptions()
            .addKeyValue(Buffer.buffer(identity.keyPem()))
            .addCertValue(Buffer.buffer(identity.certificatePem()));
    this.connect =
        new WebSocketConnectOptions()
            .setHost(api.getHost())
            .setPort(api.getPort())
            .setURI(Channel.PATH)
            .setSsl(true)
            .setSslOptions(sslOptions(pem));
  }

  private ClientSSLOptions sslOptions(KeyCertOptions keys) {
    return new ClientSSLOptions()
        .setKeyCertOptions(keys)
        .setTrustOptions(
            TrustOptions.wrap(new PinnedTrustManager(CaPin.of(parse(identity.caPem())))))
        .setHostnameVerificationAlgorithm(
            ""); // the pinned CA is the trust decision, whatever the name
  }

  /** Connects, and keeps reconnecting until {@link #stop}. */
  public void start() {
    vertx.runOnContext(v -> connect());
  }

  public Future<Void> stop() {
    stopped = true;
    vertx.cancelTimer(heartbeatTimer);
    return (socket == null ? Future.<Void>succeededFuture() : socket.close())
        .eventually(
            () -> {
              log.close();
              return Future.succeededFuture();
            });
  }

  /** Whether the channel is open now. */
  public boolean connected() {
    return socket != null && !socket.isClosed();
  }

  private void connect() {
    if (stopped) {
      return;
    }
    if (!keysDecoded) {
      vertx
          .executeBlocking(() -> pem.getKeyManagerFactory(vertx), false)
          .onComplete(
              ar -> {
                keysDecoded =
                    true; // decoded, or left to the connection to decode (and to fail on) as before
                if (ar.succeeded()) {
                  connect.setSslOptions(sslOptions(KeyCertOptions.wrap(ar.result())));
                }
                connect();
              });
      return;
    }
    client
        .connect(connect)
        .onComplete(
            ar -> {
              if (ar.failed()) {
                LOG.debug(
                    "Channel of {}: cannot connect ({}), retrying in {} ms",
                    identity.machineId(),
                    ar.cause().getMessage(),
                    backoffMs);
                reconnectLater();
                return;
              }
              socket = ar.result();
              backoffMs = 250;
              socket.textMessageHandler(this::onFrame);
              socket.closeHandler(
                  v -> {
                    vertx.cancelTimer(heartbeatTimer);
                    LOG.debug(
                        "Channel of {} closed ({} {})",
                        identity.machineId(),
                        socket.closeStatusCode(),
                        socket.closeReason());
                    reconnectLater();
                  });
              send(new Hello(log.lastSeq()));
              log.unacked().forEach(this::send); // results the API may not have recorded
            });
  }

  private void reconnectLater() {
    if (!stopped) {
      vertx.setTimer(reconnectDelay(backoffMs, ThreadLocalRandom.current()), t -> connect());
      backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
    }
  }

  /**
   * A retry after {@code backoffMs}, drawn from its second half: when a replica dies, every agent
   * it held reconnects at once, and with the same delays they would come back together, wave after
   * wave, each wave of TLS handshakes more than the survivor answers in time. Spread, they come in
   * a stream.
   */
  static long reconnectDelay(long backoffMs, Random random) {
    return backoffMs / 2 + (long) (random.nextDouble() * (backoffMs - backoffMs / 2));
  }

  private void onFrame(String text) {
    JsonObject json;
    Frame frame;
    try {
      json = new JsonObject(text);
    } catch (DecodeException e) {
      LOG.warn("Ignoring a malformed frame from the API");
      return;
    }
    try {
      frame = Frame.parse(json);
    } catch (MalformedFrame e) {
      LOG.warn("Ignoring a frame from the API that this agent cannot read: {}", e.getMessage());
      // A command this agent cannot run (a newer API's kind) still gets a result: its machine must
      // not wait on it.
      if (FrameType.COMMAND.wire().equals(json.getValue("type"))
          && json.getValue("id") instanceof String id) {
        send(Result.failed(id, "this agent cannot run it: " + e.getMessage()));
      }
      return;
    }
    if (frame instanceof Welcome welcome) {
      heartbeats(welcome.heartbeatSeconds());
    } else if (frame instanceof Command command) {
      take(command);
    } else if (frame instanceof Ack ack) {
      log.acknowledged(ack.commandId());
    } else {
      LOG.debug("Ignoring a {} frame", frame.type());
    }
  }

  /**
   * Beats at the API's interval, resending any result not yet acknowledged (the API may have failed
   * to record it).
   */
  private void heartbeats(long seconds) {
    vertx.cancelTimer(heartbeatTimer);
    heartbeatTimer =
        vertx.setPeriodic(
            seconds * 1000,
            t -> {
              send(new Heartbeat());
              log.unacked().forEach(this::send);
            });
  }

  /**
   * A command arrives: queued unless it was taken before (then its result, if unacknowledged, goes
   * again).
   */
  private void take(Command command) {
    if (log.taken(command.seq()) || queue.stream().anyMatch(c -> c.id().equals(command.id()))) {
      Result result = log.unackedResult(command.id());
      if (result != null) {
        send(result);
      }
      return;
    }
    queue.add(command);
    runNext();
  }

  private void runNext() {
    if (running || queue.isEmpty()) {
      return;
    }
    running = true;
    Command command = queue.poll();
    LOG.info("Running {}", command);
    log.started(command)
        .compose(
            x ->
                executor
                    .run(
                        command,
                        (step, message) ->
                            vertx.runOnContext(
                                v -> send(new Progress(command.id(), step, message))))
                    // A command that cannot be run still gets a result: the machine must not wait
                    // on it forever.
                    .recover(
                        err ->
                            Future.succeededFuture(
                                Outcome.failed("could not run: " + err.getMessage()))))
        .compose(outcome -> log.finished(command, outcome))
        .onComplete(
            ar -> {
              running = false;
              if (ar.succeeded()) {
                LOG.info("{} {}", command, ar.result().status());
                send(ar.result());
              } else {
                // The command log cannot be written: the command did not run; say so (unrecorded,
                // best effort).
                LOG.error(
                    "{} could not be recorded, so it was not run: {}",
                    command,
                    ar.cause().getMessage());
                send(
                    Result.failed(
                        command.id(),
                        "the agent cannot record commands: " + ar.cause().getMessage()));
              }
              runNext();
            });
  }

  private void send(Frame frame) {
    if (connected()) {
      socket.writeTextMessage(frame.encode());
    }
  }

  private static X509Certificate parse(String pem) {
    try {
      return (X509Certificate)
          CertificateFactory.getInstance("X.509")
              .generateCertificate(
                  new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    } catch (Exception e) {
      throw new IllegalArgumentException("the stored CA certificate cannot be read", e);
    }
  }
}
