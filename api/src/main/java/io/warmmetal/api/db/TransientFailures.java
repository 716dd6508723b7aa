package io.warmmetal.api.db;

import io.vertx.core.VertxException;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.channels.ClosedChannelException;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * Which failures a retry can outlive: the database (or the network to it) down, restarting,
 * overloaded or slow, as opposed to a bug or a refusal. The API answers them 503 with Retry-After
 * and logs them once per burst.
 */
public final class TransientFailures {
  /**
   * SQLSTATE classes: connection exception, insufficient resources, operator intervention, system
   * error.
   */
  private static final Set<String> CLASSES = Set.of("08", "53", "57", "58");

  /**
   * Serialization failure and deadlock: the transaction helpers retry them; one that still escapes
   * is transient.
   */
  private static final Set<String> STATES = Set.of("40001", "40P01");

  /**
   * How the pool and the connection say they are gone when they have no exception type of their
   * own.
   */
  private static final String[] MESSAGES = {
    "connection is not active",
    "closed",
    "connection reset",
    "broken pipe",
    "connection refused",
    "timeout",
    "timed out"
  };

  private TransientFailures() {}

  public static boolean isTransient(Throwable failure) {
    // The cause chain too: a connect failure may come wrapped.
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (isTransientItself(t)) {
        return true;
      }
    }
    return false;
  }

  private static boolean isTransientItself(Throwable t) {
    if (t instanceof PgException pg) {
      String state = pg.getSqlState();
      return state != null
          && (STATES.contains(state)
              || CLASSES.contains(state.substring(0, Math.min(2, state.length()))));
    }
    if (t instanceof ClosedConnectionException
        || t instanceof SocketException
        || t instanceof SocketTimeoutException
        || t instanceof UnknownHostException
        || t instanceof ClosedChannelException
        || t instanceof TimeoutException) {
      return true;
    }
    if (t instanceof IOException && t.getClass().getName().startsWith("io.netty.")) {
      return true; // Netty's native "Connection reset by peer" and its kin
    }
    if (t instanceof VertxException
        || t instanceof IllegalStateException
        || t instanceof IOException) {
      // Vert.x's NoStackTraceThrowable is a VertxException; a closed pool an IllegalStateException;
      // the JDK's
      // socket writes say "Connection reset by peer" with a plain IOException.
      String message = t.getMessage() == null ? "" : t.getMessage().toLowerCase(Locale.ROOT);
      for (String m : MESSAGES) {
        if (message.contains(m)) {
          return true;
        }
      }
    }
    return false;
  }
}
