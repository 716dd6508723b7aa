package io.warmmetal.controller.karpenter;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as Kubernetes and Karpenter write them: {@code 90s}, {@code 15m}, {@code 1h30m}, {@code
 * 720h}.
 */
public final class GoDuration {
  private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)");

  private GoDuration() {}

  /**
   * As {@link #parse}, but {@code ifInvalid} for text that is no duration: for values written
   * before the CRD checked them, where one bad object must not stop a pass over all of them.
   */
  public static Duration parseOr(String text, Duration fallback, Duration ifInvalid) {
    try {
      return parse(text, fallback);
    } catch (IllegalArgumentException e) {
      return ifInvalid;
    }
  }

  /** The duration, or {@code fallback} when the text is empty. */
  public static Duration parse(String text, Duration fallback) {
    if (text == null || text.isBlank()) {
      return fallback;
    }
    Matcher m = PART.matcher(text.trim());
    long ms = 0;
    int end = 0;
    while (m.find() && m.start() == end) {
      double n = Double.parseDouble(m.group(1));
      ms +=
          (long)
              (n
                  * switch (m.group(2)) {
                    case "ms" -> 1;
                    case "s" -> 1000;
                    case "m" -> 60_000;
                    default -> 3_600_000;
                  });
      end = m.end();
    }
    if (end != text.trim().length() || end == 0) {
      throw new IllegalArgumentException("not a duration: '" + text + "' (e.g. 90s, 15m, 1h30m)");
    }
    return Duration.ofMillis(ms);
  }
}
