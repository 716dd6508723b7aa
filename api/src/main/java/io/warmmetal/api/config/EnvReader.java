package io.warmmetal.api.config;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads typed settings from environment variables, failing with the variable's name on a bad value.
 */
final class EnvReader {
  private final Map<String, String> env;
  private final Set<String> asked = new TreeSet<>();

  EnvReader(Map<String, String> env) {
    this.env = env;
  }

  /** Every variable name read so far. */
  Set<String> asked() {
    return asked;
  }

  Optional<String> optional(String name) {
    asked.add(name);
    String v = env.get(name);
    return v == null || v.isBlank() ? Optional.empty() : Optional.of(v.trim());
  }

  String string(String name, String fallback) {
    return optional(name).orElse(fallback);
  }

  boolean bool(String name, boolean fallback) {
    Optional<String> v = optional(name);
    if (v.isEmpty()) {
      return fallback;
    }
    return switch (v.get().toLowerCase(Locale.ROOT)) {
      case "true", "on", "1", "yes" -> true;
      case "false", "off", "0", "no" -> false;
      default ->
          throw new IllegalArgumentException(
              name + " must be true or false, got '" + v.get() + "'");
    };
  }

  int integer(String name, int fallback, int min, int max) {
    Optional<String> v = optional(name);
    if (v.isEmpty()) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(v.get());
      if (n < min || n > max) {
        throw new IllegalArgumentException(
            name + " must be between " + min + " and " + max + ", got " + n);
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be an integer, got '" + v.get() + "'");
    }
  }
}
