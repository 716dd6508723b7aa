package io.warmmetal.cli.events;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import io.warmmetal.cli.output.Cells;
import io.warmmetal.cli.output.OutputFormat;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;

/**
 * Events as they arrive: one aligned line each (a stream cannot be padded to its widest cell, so
 * columns are fixed-width); with {@code -o json} one object per line, with {@code -o yaml} one
 * sequence item each, so that {@code --follow} output stays parseable however long it runs.
 */
public final class EventFormat {
  private static final ObjectMapper YAML =
      new ObjectMapper(new YAMLFactory().disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER));
  private static final String LINE = "%-27s  %-16s  %-22s  %-14s  %-14s  %s";

  /**
   * Times to the microsecond, always six digits: the API drops a fraction's trailing zeros, which
   * would leave the columns ragged.
   */
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

  private EventFormat() {}

  public static void print(PrintWriter out, OutputFormat format, JsonNode events, boolean header) {
    if (format == OutputFormat.JSON) {
      events.forEach(e -> out.println(e.toString()));
    } else if (format == OutputFormat.YAML) {
      events.forEach(e -> out.print(yamlItem(e)));
    } else {
      if (header) {
        out.println(
            String.format(LINE, "TIME", "TYPE", "SUBJECT", "FROM", "TO", "REASON").stripTrailing());
      }
      events.forEach(e -> out.println(line(e)));
    }
    out.flush();
  }

  private static String time(String at) {
    try {
      return TIME.format(Instant.parse(at));
    } catch (DateTimeParseException notAnInstant) {
      return at;
    }
  }

  private static String yamlItem(JsonNode e) {
    try {
      return YAML.writeValueAsString(List.of(e));
    } catch (JsonProcessingException ex) {
      throw new UncheckedIOException(ex);
    }
  }

  public static String line(JsonNode e) {
    return String.format(
            LINE,
            time(e.path("at").asText()),
            e.path("type").asText(),
            e.path("subject").asText(),
            Cells.text(e.get("from")),
            Cells.text(e.get("to")),
            Cells.text(e.get("reason")))
        .stripTrailing();
  }
}
