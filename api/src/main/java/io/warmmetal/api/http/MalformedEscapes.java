package io.warmmetal.api.http;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A URL's malformed %-escapes ({@code %zz}, a trailing {@code %}): the caller's mistake, which
 * Vert.x Web cannot route (it would answer 500), so it is refused before routing, naming where it
 * is.
 */
final class MalformedEscapes {
  private static final Pattern MALFORMED = Pattern.compile("%(?![0-9A-Fa-f]{2})");

  private MalformedEscapes() {}

  /** The refusal for a URI with a malformed escape, or null if it has none. */
  static ApiError find(String uri) {
    Matcher m = MALFORMED.matcher(uri);
    if (!m.find()) {
      return null;
    }
    int query = uri.indexOf('?');
    if (query < 0 || m.start() < query) {
      return ApiError.invalid(
          "path",
          "the request path has a malformed %-escape (a % must be followed by two hex "
              + "digits)");
    }
    // The query parameter it is in: the text between the '&' (or '?') before it and the next '=' or
    // '&'.
    int start = Math.max(uri.lastIndexOf('&', m.start()), query) + 1;
    int end = start;
    while (end < uri.length() && uri.charAt(end) != '=' && uri.charAt(end) != '&') {
      end++;
    }
    String name = uri.substring(start, end);
    String field = name.isEmpty() || name.contains("%") ? "query" : name;
    return ApiError.invalid(
        field,
        "query parameter "
            + field
            + " has a malformed %-escape (a % must be followed by "
            + "two hex digits)");
  }
}
