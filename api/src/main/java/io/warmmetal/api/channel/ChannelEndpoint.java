package io.warmmetal.api.channel;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.http.ServerWebSocketHandshake;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.api.crypto.Redaction;
import io.warmmetal.api.http.OutageLog;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.lifecycle.Refusal;
import io.warmmetal.api.lifecycle.Refusal.Reason;
import io.warmmetal.protocol.MalformedFrame;
import io.warmmetal.protocol.channel.Ack;
import io.warmmetal.protocol.channel.Channel;
import io.warmmetal.protocol.channel.Frame;
import io.warmmetal.protocol.channel.Heartbeat;
import io.warmmetal.protocol.channel.Hello;
import io.warmmetal.protocol.channel.Progress;
import io.warmmetal.protocol.channel.Result;
import io.warmmetal.protocol.channel.Welcome;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /v1/channel} on the agent port: a WebSocket accepted only from a client certificate
 * that is its machine's current one (the serial enrollment stored) for a machine that is not
 * retired. A frame that breaks the protocol closes that connection only.
 */
final class ChannelEndpoint {
  private static final Logger LOG = LoggerFactory.getLogger(ChannelEndpoint.class);
  private static final int MAX_FRAME_CHARS = 64 * 1024;

  /**
   * Every connected agent's hello and results fail while the database is down: one line per burst.
   */
  private static final OutageLog OUTAGE =
      new OutageLog(
          LOG, "Agent channel: database unavailable", "agent messages", Duration.ofSeconds(60));

  private final Vertx vertx;
  private final Pool db;
  private final Lifecycle lifecycle;
  private final AgentSessions sessions;
  private final CommandDelivery delivery;
  private final Duration heartbeat;
  private final AtomicLong refused = new AtomicLong();
  private final ChannelSetups setups;

  ChannelEndpoint(
      Vertx vertx,
      Pool db,
      Lifecycle lifecycle,
      AgentSessions sessions,
      CommandDelivery delivery,
      Duration heartbeat,
      ChannelSetups setups) {
    this.vertx = vertx;
    this.setups = setups;
    this.db = db;
    this.lifecycle = lifecycle;
    this.sessions = sessions;
    this.delivery = delivery;
    this.heartbeat = heartbeat;
  }

  void handshake(ServerWebSocketHandshake handshake) {
    if (!Channel.PATH.equals(handshake.path())) {
      handshake.reject(404);
      return;
    }
    X509Certificate cert;
    String machineId;
    try {
      cert = (X509Certificate) handshake.peerCertificates().get(0);
      machineId = CertificateAuthority.machineIdOf(cert);
    } catch (Exception e) {
      handshake.reject(401); // no client certificate: enroll first
      return;
    }
    String serial = cert.getSerialNumber().toString(16);
    // Its turn may come on another connection's event loop: the rest runs on this connection's own
    // (accepting a
    // handshake from another thread blocks that thread until the connection's loop has done it).
    Context connection = vertx.getOrCreateContext();
    setups
        .begin()
        .onComplete(
            turn ->
                connection.runOnContext(
                    v -> {
                      if (turn.failed()) {
                        handshake.reject(
                            503); // waited too long behind other agents: it retries later
                        return;
                      }
                      ChannelSetups.Permit setup = turn.result();
                      // A set-up whose agent goes quiet before its hello frees its place anyway.
                      vertx.setTimer(heartbeat.toMillis(), t -> setup.end());
                      setUp(handshake, machineId, serial, setup);
                    }));
  }

  private void setUp(
      ServerWebSocketHandshake handshake,
      String machineId,
      String serial,
      ChannelSetups.Permit setup) {
    // The current certificate, or a renewed one used for the first time — which from now on is the
    // only one.
    db.preparedQuery(
            """
            WITH promoted AS (
              UPDATE machines SET cert_serial = next_cert_serial, next_cert_serial = NULL
              WHERE id = $1 AND next_cert_serial = $2 RETURNING state)
            SELECT state FROM promoted
            UNION ALL
            SELECT state FROM machines WHERE id = $1 AND cert_serial = $2""")
        .execute(Tuple.of(machineId, serial))
        .onFailure(
            err -> {
              setup.end();
              handshake.reject(503);
            })
        .onSuccess(
            rows -> {
              if (rows.size() == 0 || "retired".equals(rows.iterator().next().getString("state"))) {
                setup.end();
                LOG.info(
                    "Refused a channel for {}: not its current certificate, or retired", machineId);
                refused.incrementAndGet();
                handshake.reject(403);
                return;
              }
              handshake
                  .accept()
                  .onSuccess(ws -> open(machineId, serial, ws, setup))
                  .onFailure(err -> setup.end());
            });
  }

  /**
   * Handshakes refused because the certificate is not the machine's current one (or it is retired).
   */
  long refused() {
    return refused.get();
  }

  private void open(
      String machineId, String serial, ServerWebSocket ws, ChannelSetups.Permit setup) {
    AgentSession session =
        new AgentSession(machineId, serial, ws, vertx.getOrCreateContext(), setup);
    sessions.add(session);
    ws.textMessageHandler(text -> onFrame(session, text));
    ws.binaryMessageHandler(b -> refuse(session, "binary frames are not part of the protocol"));
    ws.exceptionHandler(err -> LOG.debug("Channel of {}: {}", machineId, err.getMessage()));
    ws.closeHandler(
        v -> {
          setup.end();
          sessions.remove(session);
        });
  }

  private void onFrame(AgentSession session, String text) {
    session.lastHeard = System.currentTimeMillis();
    Frame frame;
    try {
      if (text.length() > MAX_FRAME_CHARS) {
        throw new MalformedFrame("frame too large");
      }
      frame = Frame.parse(text);
    } catch (MalformedFrame e) {
      refuse(session, e.getMessage());
      return;
    }
    if (!session.helloed && !(frame instanceof Hello)) {
      refuse(session, "the first frame must be hello");
      return;
    }
    if (frame instanceof Hello hello) {
      hello(session, hello);
    } else if (frame instanceof Progress progress) {
      progress(session, progress);
    } else if (frame instanceof Result result) {
      result(session, result);
    } else if (!(frame instanceof Heartbeat)) { // a heartbeat only refreshes lastHeard
      refuse(session, "an agent does not send " + frame.type() + " frames");
    }
  }

  private void hello(AgentSession session, Hello hello) {
    if (session.helloed) {
      refuse(session, "hello is the first frame, once");
      return;
    }
    session.helloed = true;
    session.lastSentSeq = hello.lastSeq();
    lifecycle
        .agentConnected(session.machineId, session.certSerial)
        .onFailure(
            err -> {
              if (!OUTAGE.ifTransient(err)) {
                LOG.warn("Marking {} connected failed: {}", session.machineId, err.getMessage());
              }
            })
        .onComplete(
            ar -> {
              if (ar.failed()
                  && ar.cause() instanceof Refusal r
                  && r.reason() == Reason.Forbidden) {
                session.close(
                    (short) 1008,
                    "certificate replaced"); // re-enrolled or renewed since the handshake
                return;
              }
              session.send(new Welcome(session.machineId, heartbeat.toSeconds()));
              delivery.deliver(session);
              session.setup
                  .end(); // its presence is recorded and its delivery under way: the next agent's
              // turn
            });
  }

  private void progress(AgentSession session, Progress progress) {
    if (progress.step().length() > 128) {
      refuse(session, "a step is named in at most 128 characters");
      return;
    }
    String text = redacted(progress.message(), 1024);
    session.reports =
        session.reports.transform(
            x ->
                lifecycle
                    .recordProgress(
                        session.machineId,
                        session.certSerial,
                        progress.commandId(),
                        progress.step(),
                        text)
                    .onFailure(
                        err ->
                            LOG.debug(
                                "Recording progress of {} failed: {}",
                                progress.commandId(),
                                err.getMessage())));
  }

  private void result(AgentSession session, Result result) {
    String text = redacted(result.message(), 4096);
    // One at a time, in order: a later result (or step) must not overtake an earlier one on its way
    // to the database.
    session.reports =
        session.reports.transform(
            x ->
                lifecycle
                    .reportAgentResult(
                        session.machineId,
                        session.certSerial,
                        result.commandId(),
                        result.succeeded(),
                        text)
                    .onComplete(
                        ar ->
                            answer(session, result.commandId(), ar.failed() ? ar.cause() : null)));
  }

  /**
   * An agent's message cut to {@code max} characters, secrets it may echo redacted: it ends up in
   * events anyone with read access sees.
   */
  private static String redacted(String message, int max) {
    return message == null
        ? null
        : Redaction.redact(message.substring(0, Math.min(max, message.length())), List.of());
  }

  /**
   * Acknowledges what is settled (so the agent forgets it); what may succeed later stays
   * unacknowledged.
   */
  private static void answer(AgentSession session, String commandId, Throwable failure) {
    if (failure instanceof Refusal r && r.reason() == Reason.EarlierCommandOpen) {
      return; // an earlier command's result is still missing: the agent sends this one again later
    }
    if (failure != null && !(failure instanceof Refusal)) {
      if (!OUTAGE.ifTransient(failure)) {
        LOG.warn(
            "Recording {}'s result for {} failed: {}",
            session.machineId,
            commandId,
            failure.getMessage());
      }
      return; // not recorded: the agent resends it with its next heartbeat
    }
    session.send(new Ack(commandId));
    if (failure instanceof Refusal r
        && (r.reason() == Reason.Forbidden || r.reason() == Reason.NotFound)) {
      refuse(
          session, r.getMessage()); // not this agent's to report: dropped (acknowledged), and the
      // connection closed
    }
  }

  private static void refuse(AgentSession session, String why) {
    LOG.info("Closing the channel of {}: {}", session.machineId, why);
    session.close(Channel.CLOSE_PROTOCOL, why.length() > 120 ? why.substring(0, 120) : why);
  }
}
