package io.warmmetal.api.ec2;

import java.util.List;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * EC2's filter values: {@code *} any run of characters, {@code ?} any one, {@code \} escaping the
 * next — as a SQL LIKE pattern, or as a regular expression for what is filtered in memory.
 */
final class Wildcards {
  private Wildcards() {}

  static String like(String value) {
    return translate(value, "%", "_", c -> c == '%' || c == '_' || c == '\\' ? "\\" + c : "" + c);
  }

  static Pattern regex(String value) {
    return Pattern.compile(translate(value, ".*", ".", c -> Pattern.quote("" + c)), Pattern.DOTALL);
  }

  /** Keeps the items whose {@code field} matches any of the filter's {@code values}. */
  static <T> void retain(List<T> items, List<String> values, Function<T, String> field) {
    List<Pattern> patterns = values.stream().map(Wildcards::regex).toList();
    items.removeIf(t -> patterns.stream().noneMatch(p -> p.matcher(field.apply(t)).matches()));
  }

  private interface Literal {
    String of(char c);
  }

  private static String translate(String value, String any, String one, Literal literal) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '\\' && i + 1 < value.length()) {
        out.append(literal.of(value.charAt(++i)));
      } else if (c == '*') {
        out.append(any);
      } else if (c == '?') {
        out.append(one);
      } else {
        out.append(literal.of(c));
      }
    }
    return out.toString();
  }
}
