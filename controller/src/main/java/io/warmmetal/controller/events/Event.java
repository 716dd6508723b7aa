package io.warmmetal.controller.events;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.util.List;

/**
 * A Kubernetes Event to publish, as upstream's {@code events.Event}: about an object, Normal or Warning, a reason and a
 * message; events with the same reason and dedupe values are published once per dedupe timeout.
 */
public record Event(HasMetadata involved, String type, String reason, String message, List<String> dedupeValues,
    Duration dedupeTimeout) {
  public static final String NORMAL = "Normal";
  public static final String WARNING = "Warning";
  static final Duration DEFAULT_DEDUPE = Duration.ofMinutes(2);

  String dedupeKey() {
    return reason.toLowerCase(java.util.Locale.ROOT) + "-" + String.join("-", dedupeValues);
  }
}
