package io.warmmetal.api.http;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The API port's limits against slow and piled-up clients: a connection idle this long is closed, a first request's
 * headers and a request's body must arrive in time, and only so many connections are open at once.
 *
 * @param connections the open connections, counted across every verticle of the port
 */
public record HttpLimits(Duration idleTimeout, Duration headerTimeout, Duration bodyTimeout, Connections connections) {

  /** Open connections, capped; one instance per port, shared by its event loops. */
  public static final class Connections {
    private final int max;
    private final AtomicInteger open = new AtomicInteger();

    public Connections(int max) {
      this.max = max;
    }

    /** Counts a new connection in, or refuses it (uncounted) when the cap is reached. */
    boolean tryOpen() {
      if (open.incrementAndGet() > max) {
        open.decrementAndGet();
        return false;
      }
      return true;
    }

    void closed() {
      open.decrementAndGet();
    }
  }
}
