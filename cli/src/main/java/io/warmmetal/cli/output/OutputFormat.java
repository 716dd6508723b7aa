package io.warmmetal.cli.output;

import java.util.Locale;

/** {@code -o}: a table (the default), a wider table, or the API's own JSON as JSON or YAML. */
public enum OutputFormat {
  TABLE,
  WIDE,
  JSON,
  YAML;

  /** picocli converter: {@code json|yaml|wide|table}. */
  public static OutputFormat parse(String value) {
    try {
      return valueOf(value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new picocli.CommandLine.TypeConversionException(
          "'" + value + "' is not json, yaml, wide or table");
    }
  }
}
