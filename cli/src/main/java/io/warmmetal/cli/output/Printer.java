package io.warmmetal.cli.output;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/** Prints API objects: as a table of columns, or the objects themselves as JSON or YAML. */
public final class Printer {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  private static final ObjectMapper YAML =
      new ObjectMapper(new YAMLFactory().disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER));

  private final PrintWriter out;
  private final OutputFormat format;

  public Printer(PrintWriter out, OutputFormat format) {
    this.out = out;
    this.format = format;
  }

  /** One object, or an array of them (a list prints as the array in JSON and YAML). */
  public void print(JsonNode items, List<Column> columns) {
    switch (format) {
      case JSON -> out.println(write(JSON, items));
      case YAML -> out.print(write(YAML, items));
      default -> table(items, columns);
    }
    out.flush();
  }

  private void table(JsonNode items, List<Column> columns) {
    List<Column> shown = new ArrayList<>();
    for (Column c : columns) {
      if (!c.wide() || format == OutputFormat.WIDE) {
        shown.add(c);
      }
    }
    Table table = new Table(shown.stream().map(Column::header).toList());
    if (items.isArray()) {
      items.forEach(item -> table.add(shown.stream().map(c -> c.cell().apply(item)).toList()));
    } else {
      table.add(shown.stream().map(c -> c.cell().apply(items)).toList());
    }
    table.print(out);
  }

  private static String write(ObjectMapper mapper, JsonNode node) {
    try {
      return mapper.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }
}
