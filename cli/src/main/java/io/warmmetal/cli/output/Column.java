package io.warmmetal.cli.output;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.function.Function;

/**
 * A table column: its upper-case header, how to get its cell from an item, and whether only {@code
 * -o wide} shows it.
 */
public record Column(String header, Function<JsonNode, String> cell, boolean wide) {

  public static Column of(String header, Function<JsonNode, String> cell) {
    return new Column(header, cell, false);
  }

  public static Column wide(String header, Function<JsonNode, String> cell) {
    return new Column(header, cell, true);
  }

  /** A column showing one field as text ({@code <none>} when absent or null, as kubectl). */
  public static Column field(String header, String field) {
    return of(header, item -> Cells.text(item.get(field)));
  }
}
