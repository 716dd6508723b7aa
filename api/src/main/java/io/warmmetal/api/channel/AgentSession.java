package io.warmmetal.api.channel;

import io.vertx.core.Context;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.json.JsonObject;

/** One agent's live connection on this replica. Used from the connection's event loop only. */
final class AgentSession {
  final String machineId;
  final ServerWebSocket socket;
  /** The connection's event loop: whatever touches the session runs there. */
  final Context context;
  boolean helloed;
  /** The highest command seq sent (or, after hello, already taken by the agent). */
  long lastSentSeq;
  long lastHeard = System.currentTimeMillis();
  private boolean delivering;
  private boolean deliverAgain;

  AgentSession(String machineId, ServerWebSocket socket, Context context) {
    this.machineId = machineId;
    this.socket = socket;
    this.context = context;
  }

  void send(JsonObject frame) {
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
