package io.warmmetal.api.channel;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.http.ServerWebSocket;
import io.warmmetal.protocol.channel.Frame;

/** One agent's live connection on this replica. Used from the connection's event loop only. */
final class AgentSession {
  final String machineId;

  /**
   * The serial of the certificate this connection was opened with; only the machine's current one
   * may speak.
   */
  final String certSerial;

  final ServerWebSocket socket;

  /** The connection's event loop: whatever touches the session runs there. */
  final Context context;

  volatile boolean helloed;

  /** The highest command seq sent (or, after hello, already taken by the agent). */
  long lastSentSeq;

  volatile long lastHeard = System.currentTimeMillis();
  private boolean delivering;
  private boolean deliverAgain;

  /**
   * Progress and results are recorded one after another, in the order the agent sent them: a
   * command's steps reach the event log in the order they ran, and before its result.
   */
  Future<?> reports = Future.succeededFuture();

  /** Its place among the channels being set up, until its hello is through. */
  final ChannelSetups.Permit setup;

  AgentSession(
      String machineId,
      String certSerial,
      ServerWebSocket socket,
      Context context,
      ChannelSetups.Permit setup) {
    this.machineId = machineId;
    this.certSerial = certSerial;
    this.socket = socket;
    this.context = context;
    this.setup = setup;
  }

  void send(Frame frame) {
    if (!socket.isClosed()) {
      socket.writeTextMessage(frame.encode());
    }
  }

  void close(short code, String reason) {
    if (!socket.isClosed()) {
      socket.close(code, reason);
    }
  }

  /** Starts a delivery unless one runs; one asked for meanwhile runs after it. */
  boolean beginDelivery() {
    if (delivering) {
      deliverAgain = true;
      return false;
    }
    delivering = true;
    return true;
  }

  /** Ends a delivery; true if another was asked for meanwhile. */
  boolean endDelivery() {
    delivering = false;
    boolean again = deliverAgain;
    deliverAgain = false;
    return again;
  }
}
