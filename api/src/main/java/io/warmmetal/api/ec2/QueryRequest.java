package io.warmmetal.api.ec2;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An EC2 Query request's parameters ({@code Action=RunInstances&MinCount=1&InstanceId.1=…}), from
 * its form body and its query string, with EC2's list conventions: {@code Name.N}, {@code
 * Filter.N.Name} and {@code Filter.N.Value.M}, {@code Tag.N.Key} and {@code Tag.N.Value}.
 */
final class QueryRequest {
  /** A filter of a Describe call: its name and the values any of which may match. */
  record Filter(String name, List<String> values) {}

  /** What every request may carry besides its action's own parameters (pre-signing included). */
  private static final Pattern COMMON =
      Pattern.compile("Action|Version|X-Amz-[A-Za-z-]+|AWSAccessKeyId|SignatureVersion");

  private static final Pattern INDEX = Pattern.compile("[1-9][0-9]{0,4}");
  private final Map<String, String> params;

  private QueryRequest(Map<String, String> params) {
    this.params = params;
  }

  /** Reads the form body and the query string; a parameter given twice is refused. */
  static QueryRequest parse(String body, String rawQuery) {
    Map<String, String> params = new LinkedHashMap<>();
    decodeInto(rawQuery, params);
    decodeInto(body, params);
    return new QueryRequest(params);
  }

  private static void decodeInto(String form, Map<String, String> params) {
    if (form == null || form.isEmpty()) {
      return;
    }
    for (String pair : form.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String name = decode(eq < 0 ? pair : pair.substring(0, eq));
      String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
      if (params.put(name, value) != null) {
        throw new Ec2Error(
            "InvalidParameterCombination", 400, "The parameter " + name + " is given twice");
      }
    }
  }

  private static String decode(String s) {
    try {
      return URLDecoder.decode(s, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new Ec2Error(
          "MalformedQueryString", 400, "The request is not valid form encoding: " + e.getMessage());
    }
  }

  String action() {
    return params.get("Action");
  }

  String version() {
    return params.get("Version");
  }

  /**
   * Refuses, as EC2 does, a parameter that is none of the action's ({@code accepted}: patterns over
   * whole names, {@code N} standing for a list index).
   */
  void accept(String action, List<String> accepted) {
    List<Pattern> patterns = accepted.stream().map(QueryRequest::namePattern).toList();
    for (String name : params.keySet()) {
      if (COMMON.matcher(name).matches()
          || patterns.stream().anyMatch(p -> p.matcher(name).matches())) {
        continue;
      }
      throw new Ec2Error(
          "UnknownParameter",
          400,
          "The parameter " + name + " is not recognized by " + action + " here");
    }
  }

  /** {@code Filter.N.Value.N} → a pattern: each segment {@code N} an index, the rest literal. */
  private static Pattern namePattern(String accepted) {
    StringBuilder regex = new StringBuilder();
    for (String segment : accepted.split("\\.")) {
      regex.append(regex.isEmpty() ? "" : "\\.");
      regex.append(segment.equals("N") ? INDEX.pattern() : Pattern.quote(segment));
    }
    return Pattern.compile(regex.toString());
  }

  String string(String name) {
    return params.get(name);
  }

  String required(String name) {
    String value = params.get(name);
    if (value == null || value.isEmpty()) {
      throw Ec2Error.missing(name);
    }
    return value;
  }

  Integer integer(String name, int min, int max) {
    String value = params.get(name);
    if (value == null) {
      return null;
    }
    int n;
    try {
      n = Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw Ec2Error.invalidValue(name, "must be an integer; got '" + value + "'");
    }
    if (n < min || n > max) {
      throw Ec2Error.invalidValue(name, "must be between " + min + " and " + max + "; got " + n);
    }
    return n;
  }

  boolean bool(String name) {
    String value = params.get(name);
    if (value == null) {
      return false;
    }
    if (value.equalsIgnoreCase("true") || value.equalsIgnoreCase("false")) {
      return Boolean.parseBoolean(value);
    }
    throw Ec2Error.invalidValue(name, "must be true or false; got '" + value + "'");
  }

  /** {@code prefix.1}, {@code prefix.2}, … in index order. */
  List<String> list(String prefix) {
    return new ArrayList<>(indexed(prefix, "").values());
  }

  /** {@code Filter.N.Name} with its {@code Filter.N.Value.M}, in index order. */
  List<Filter> filters() {
    List<Filter> out = new ArrayList<>();
    for (Map.Entry<Integer, String> name : indexed("Filter", ".Name").entrySet()) {
      List<String> values =
          new ArrayList<>(indexed("Filter." + name.getKey() + ".Value", "").values());
      out.add(new Filter(name.getValue(), values));
    }
    return out;
  }

  /** {@code prefix.N.Key} and {@code prefix.N.Value} as an ordered map; a key given twice: 400. */
  Map<String, String> tags(String prefix) {
    Map<String, String> tags = new LinkedHashMap<>();
    for (Map.Entry<Integer, String> key : indexed(prefix, ".Key").entrySet()) {
      String value = params.getOrDefault(prefix + "." + key.getKey() + ".Value", "");
      if (tags.put(key.getValue(), value) != null) {
        throw new Ec2Error(
            "InvalidParameterValue", 400, "The tag key '" + key.getValue() + "' is given twice");
      }
    }
    return tags;
  }

  /** The indices N of {@code prefix.N<suffix>} present (each with its value), in order. */
  Map<Integer, String> indexed(String prefix, String suffix) {
    Pattern p =
        Pattern.compile(
            Pattern.quote(prefix) + "\\.(" + INDEX.pattern() + ")" + Pattern.quote(suffix));
    Map<Integer, String> found = new TreeMap<>();
    for (Map.Entry<String, String> e : params.entrySet()) {
      Matcher m = p.matcher(e.getKey());
      if (m.matches()) {
        found.put(Integer.parseInt(m.group(1)), e.getValue());
      }
    }
    return found;
  }

  /** The indices N of every {@code prefix.N.…} parameter, in order. */
  Set<Integer> indices(String prefix) {
    Pattern p = Pattern.compile(Pattern.quote(prefix) + "\\.(" + INDEX.pattern() + ")\\..*");
    Set<Integer> found = new TreeSet<>();
    for (String name : params.keySet()) {
      Matcher m = p.matcher(name);
      if (m.matches()) {
        found.add(Integer.parseInt(m.group(1)));
      }
    }
    return found;
  }
}
