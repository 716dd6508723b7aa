package io.warmmetal.api.channel;

import io.vertx.core.Vertx;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.http.ServerWebSocketHandshake;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.api.crypto.Redaction;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.lifecycle.Refusal;
import io.warmmetal.api.lifecycle.Refusal.Reason;
import io.warmmetal.protocol.Frames;
import java.security.cert.X509Certificate;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /v1/channel} on the agent port: a WebSocket accepted only from a client certificate that is its
 * machine's current one (the serial enrollment stored) for a machine that is not retired. A frame that breaks the
 * protocol closes that connection only.
 */
final class ChannelEndpoint {
  private static final Logger LOG = LoggerFactory.getLogger(ChannelEndpoint.class);
  private static final int MAX_FRAME_CHARS = 64 * 1024;

  private final Vertx vertx;
  private final Pool db;
  private final Lifecycle lifecycle;
  private final AgentSessions sessions;
  private final CommandDelivery delivery;
  private final Duration heartbeat;

  ChannelEndpoint(Vertx vertx, Pool db, Lifecycle lifecycle, AgentSessions sessions, CommandDelivery delivery,
      Duration heartbeat) {
    this.vertx = vertx;
    this.db = db;
    this.lifecycle = lifecycle;
    this.sessions = sessions;
    this.delivery = delivery;
    this.heartbeat = heartbeat;
  }

  void handshake(ServerWebSocketHandshake handshake) {
    if (!Frames.PATH.equals(handshake.path())) {
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
    // The current certificate, or a renewed one used for the first time — which from now on is the only one.
    db.preparedQuery("""
            WITH promoted AS (
              UPDATE machines SET cert_serial = next_cert_serial, next_cert_serial = NULL
              WHERE id = $1 AND next_cert_serial = $2 RETURNING state)
            SELECT state FROM promoted
            UNION ALL
            SELECT state FROM machines WHERE id = $1 AND cert_serial = $2""")
        .execute(Tuple.of(machineId, serial))
        .onFailure(err -> handshake.reject(503))
        .onSuccess(rows -> {
          if (rows.size() == 0 || "retired".equals(rows.iterator().next().getString("state"))) {
            LOG.info("Refused a channel for {}: not its current certificate, or retired", machineId);
            handshake.reject(403);
            return;
          }
          handshake.accept().onSuccess(ws -> open(machineId, serial, ws));
        });
  }

  private void open(String machineId, String serial, ServerWebSocket ws) {
    AgentSession session = new AgentSession(machineId, serial, ws, vertx.getOrCreateContext());
    sessions.add(session);
    ws.textMessageHandler(text -> onFrame(session, text));
    ws.binaryMessageHandler(b -> refuse(session, "binary frames are not part of the protocol"));
    ws.exceptionHandler(err -> LOG.debug("Channel of {}: {}", machineId, err.getMessage()));
    ws.closeHandler(v -> sessions.remove(session));
  }

  private void onFrame(AgentSession session, String text) {
    session.lastHeard = System.currentTimeMillis();
    JsonObject frame;
    try {
      if (text.length() > MAX_FRAME_CHARS) {
        throw new DecodeException("frame too large");
      }
      frame = new JsonObject(text);
    } catch (DecodeException | ClassCastException e) {
      refuse(session, "malformed frame");
      return;
    }
    String type = frame.getValue("type") instanceof String t ? t : "";
    if (!session.helloed && !Frames.HELLO.equals(type)) {
      refuse(session, "the first frame must be hello");
      return;
    }
    switch (type) {
      case Frames.HELLO -> hello(session, frame);
      case Frames.HEARTBEAT -> { }
      case Frames.PROGRESS -> progress(session, frame);
      case Frames.RESULT -> result(session, frame);
      default -> refuse(session, "unknown frame type '" + type + "'");
    }
  }

  private void hello(AgentSession session, JsonObject frame) {
    if (session.helloed || !(frame.getValue("lastSeq", 0L) instanceof Number lastSeq)) {
      refuse(session, "hello is the first frame, once, with a numeric lastSeq");
      return;
    }
    session.helloed = true;
    session.lastSentSeq = lastSeq.longValue();
    lifecycle.agentConnected(session.machineId, session.certSerial)
        .onFailure(err -> LOG.warn("Marking {} connected failed: {}", session.machineId, err.getMessage()))
        .onComplete(ar -> {
          if (ar.failed() && ar.cause() instanceof Refusal r && r.reason() == Reason.Forbidden) {
            session.close((short) 1008, "certificate replaced"); // re-enrolled or renewed since the handshake
            return;
          }
          session.send(new JsonObject().put("type", Frames.WELCOME).put("machineId", session.machineId)
              .put("heartbeatSeconds", heartbeat.toSeconds()));
          delivery.deliver(session);
        });
  }

  private void progress(AgentSession session, JsonObject frame) {
    if (!(frame.getValue("commandId") instanceof String commandId) || !(frame.getValue("step") instanceof String step)
        || step.length() > 128 || !(frame.getValue("message") == null || frame.getValue("message") instanceof String)) {
      refuse(session, "progress has a commandId and a step");
      return;
    }
    String message = frame.getString("message");
    lifecycle.recordProgress(session.machineId, session.certSerial, commandId, step,
            message == null ? null : Redaction.redact(message.substring(0,
                Math.min(1024, message.length())), java.util.List.of()))
        .onFailure(err -> LOG.debug("Recording progress of {} failed: {}", commandId, err.getMessage()));
  }

  private void result(AgentSession session, JsonObject frame) {
    Object id = frame.getValue("commandId");
    Object status = frame.getValue("status");
    Object message = frame.getValue("message");
    if (!(id instanceof String commandId) || !("succeeded".equals(status) || "failed".equals(status))
        || !(message == null || message instanceof String)) {
      refuse(session, "a result has a commandId and a status of succeeded or failed");
      return;
    }
    // Agents' messages end up in events anyone with read access sees: secrets they may echo are redacted.
    String text = message == null ? null : Redaction.redact(((String) message).substring(0,
        Math.min(4096, ((String) message).length())), java.util.List.of());
    // One at a time, in order: a later result must not overtake an earlier one on its way to the database.
    session.results = session.results.transform(x -> lifecycle.reportAgentResult(session.machineId,
            session.certSerial, commandId, "succeeded".equals(status), text)
        .onComplete(ar -> answer(session, commandId, ar.failed() ? ar.cause() : null)));
  }

  /** Acknowledges what is settled (so the agent forgets it); what may succeed later stays unacknowledged. */
  private static void answer(AgentSession session, String commandId, Throwable failure) {
    if (failure instanceof Refusal r && r.reason() == Reason.EarlierCommandOpen) {
      return; // an earlier command's result is still missing: the agent sends this one again later
    }
    if (failure != null && !(failure instanceof Refusal)) {
      LOG.warn("Recording {}'s result for {} failed: {}", session.machineId, commandId, failure.getMessage());
      return; // not recorded: the agent resends it with its next heartbeat
    }
    session.send(new JsonObject().put("type", Frames.ACK).put("commandId", commandId));
    if (failure instanceof Refusal r && (r.reason() == Reason.Forbidden || r.reason() == Reason.NotFound)) {
      refuse(session, r.getMessage()); // not this agent's to report: dropped (acknowledged), and the connection closed
    }
  }

  private static void refuse(AgentSession session, String why) {
    LOG.info("Closing the channel of {}: {}", session.machineId, why);
    session.close(Frames.CLOSE_PROTOCOL, why.length() > 120 ? why.substring(0, 120) : why);
  }
}
