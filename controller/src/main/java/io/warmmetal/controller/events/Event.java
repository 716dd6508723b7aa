package io.warmmetal.controller.events;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * A Kubernetes Event to publish, as upstream's {@code events.Event}: about an object, Normal or
 * Warning, a reason and a message; events with the same reason and dedupe values are published once
 * per dedupe timeout.
 */
public record Event(
    HasMetadata involved,
    String type,
    String reason,
    String message,
    List<String> dedupeValues,
    Duration dedupeTimeout,
    RateLimit limit) {
  public Event(
      HasMetadata involved,
      String type,
      String reason,
      String message,
      List<String> dedupeValues,
      Duration dedupeTimeout) {
    this(involved, type, reason, message, dedupeValues, dedupeTimeout, null);
  }

  /**
   * A token bucket shared by every event that names it (upstream's client-go flowcontrol limiter):
   * events beyond it are dropped, so a burst of pods does not become a burst of API writes.
   */
  public static final class RateLimit {
    private final double perSecond;
    private final double burst;
    private double tokens;
    private long last = System.nanoTime();

    public RateLimit(double perSecond, int burst) {
      this.perSecond = perSecond;
      this.burst = burst;
      this.tokens = burst;
    }

    synchronized boolean tryAcquire() {
      long now = System.nanoTime();
      tokens = Math.min(burst, tokens + (now - last) / 1e9 * perSecond);
      last = now;
      if (tokens < 1) {
        return false;
      }
      tokens -= 1;
      return true;
    }
  }

  public static final String NORMAL = "Normal";
  public static final String WARNING = "Warning";
  public static final Duration DEFAULT_DEDUPE = Duration.ofMinutes(2);

  String dedupeKey() {
    return reason.toLowerCase(Locale.ROOT) + "-" + String.join("-", dedupeValues);
  }
}
