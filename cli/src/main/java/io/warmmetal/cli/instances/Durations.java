package io.warmmetal.cli.instances;

import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** {@code 500ms}, {@code 90s}, {@code 10m}, {@code 1h}; a bare number is seconds. */
public final class Durations implements ITypeConverter<Duration> {
  @Override
  public Duration convert(String value) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    try {
      if (v.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
      }
      char unit = v.charAt(v.length() - 1);
      if (Character.isDigit(unit)) {
        return Duration.ofSeconds(Long.parseLong(v));
      }
      long n = Long.parseLong(v.substring(0, v.length() - 1));
      return switch (unit) {
        case 's' -> Duration.ofSeconds(n);
        case 'm' -> Duration.ofMinutes(n);
        case 'h' -> Duration.ofHours(n);
        default ->
            throw new TypeConversionException("'" + value + "': use s, m or h, e.g. 90s or 10m");
      };
    } catch (NumberFormatException | StringIndexOutOfBoundsException e) {
      throw new TypeConversionException("'" + value + "' is not a duration such as 90s or 10m");
    }
  }
}
