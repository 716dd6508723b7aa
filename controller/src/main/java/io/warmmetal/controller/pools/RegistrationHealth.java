package io.warmmetal.controller.pools;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How the last of each NodePool's nodes fared at registration, for its {@code
 * NodeRegistrationHealthy} condition: a node that never registered (given up after the node class's
 * registration timeout) makes it False until one registers again, as upstream flags a pool whose
 * nodes do not join (a wrong CA hash, a join endpoint out of reach).
 */
public final class RegistrationHealth {
  /** The last outcome: whether the node registered, and if not, why. */
  public record Outcome(boolean registered, String message) {}

  private final Map<String, Outcome> last = new ConcurrentHashMap<>();

  public void registered(String pool) {
    if (pool != null) {
      last.put(pool, new Outcome(true, ""));
    }
  }

  public void failed(String pool, String message) {
    if (pool != null) {
      last.put(pool, new Outcome(false, message));
    }
  }

  /**
   * Null when none of the pool's nodes has registered or failed to since the controller started.
   */
  public Outcome last(String pool) {
    return last.get(pool);
  }
}
