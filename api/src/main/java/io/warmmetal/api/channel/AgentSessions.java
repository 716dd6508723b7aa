package io.warmmetal.api.channel;

import io.warmmetal.protocol.channel.Channel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The agents connected to this replica, one session per machine: a new connection replaces the old.
 */
final class AgentSessions {
  private final Map<String, AgentSession> sessions = new ConcurrentHashMap<>();

  void add(AgentSession session) {
    AgentSession previous = sessions.put(session.machineId, session);
    if (previous != null && previous != session) {
      previous.close(Channel.CLOSE_REPLACED, "replaced by a newer connection");
    }
  }

  void remove(AgentSession session) {
    sessions.remove(session.machineId, session);
  }

  AgentSession get(String machineId) {
    return sessions.get(machineId);
  }

  List<AgentSession> all() {
    return List.copyOf(sessions.values());
  }

  int size() {
    return sessions.size();
  }
}
