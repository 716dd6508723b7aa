package io.warmmetal.cli.output;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.StringJoiner;

/** How values look in a table cell. */
public final class Cells {
  public static final String NONE = "<none>";

  private Cells() {}

  public static String text(JsonNode value) {
    return value == null || value.isNull() || value.isMissingNode() ? NONE : value.asText();
  }

  /** {@code {"a":"b","c":"d"}} → {@code a=b,c=d}. */
  public static String pairs(JsonNode object) {
    if (object == null || !object.isObject() || object.isEmpty()) {
      return NONE;
    }
    StringJoiner j = new StringJoiner(",");
    object.fields().forEachRemaining(e -> j.add(e.getKey() + "=" + e.getValue().asText()));
    return j.toString();
  }

  /** A timestamp as kubectl's AGE: 5s, 3m, 2h, 4d. */
  public static String age(JsonNode timestamp, Instant now) {
    if (timestamp == null || timestamp.isNull()) {
      return NONE;
    }
    try {
      return age(Duration.between(Instant.parse(timestamp.asText()), now));
    } catch (DateTimeParseException e) {
      return timestamp.asText();
    }
  }

  public static String age(Duration d) {
    long s = Math.max(0, d.getSeconds());
    if (s < 120) {
      return s + "s";
    }
    if (s < 2 * 3600) {
      return s / 60 + "m";
    }
    if (s < 2 * 86400) {
      return s / 3600 + "h";
    }
    return s / 86400 + "d";
  }
}
