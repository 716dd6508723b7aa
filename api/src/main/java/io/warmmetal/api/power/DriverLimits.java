package io.warmmetal.api.power;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * What each driver can actually use, checked when settings are stored so that a credential the
 * driver cannot send fails now (400 naming the field and the limit) rather than at the first
 * power-on. IPMI: ipmitool's lanplus (IPMI 2.0, the only interface {@code IpmiPower} uses) takes a
 * username of at most 16 bytes and a password of at most 20. Redfish: basic authentication cannot
 * carry a ':' in the username. No driver can send control characters (NUL, newline) in a
 * credential. Addresses are host names or IP addresses: a URL would reach nothing.
 */
final class DriverLimits {
  static final int IPMI_USERNAME_BYTES = 16;
  static final int IPMI_PASSWORD_BYTES = 20;

  /**
   * A host name or IPv4 address, or an IPv6 one (two colons at least, so that host:port is no
   * host).
   */
  private static final Pattern HOST =
      Pattern.compile("[A-Za-z0-9_.-]+|[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*");

  private DriverLimits() {}

  static void check(PowerSettings s) {
    host("address", s.address());
    host("wakeAddress", s.wakeAddress());
    noControlCharacters("username", s.username());
    noControlCharacters("password", s.password());
    if ("ipmi".equals(s.driver())) {
      atMostBytes("username", s.username(), IPMI_USERNAME_BYTES);
      atMostBytes("password", s.password(), IPMI_PASSWORD_BYTES);
    }
    if ("redfish".equals(s.driver()) && s.username().indexOf(':') >= 0) {
      throw ApiError.invalid(
          "username", "a Redfish username cannot contain ':' (HTTP basic authentication)");
    }
  }

  private static void host(String field, String value) {
    if (value != null && !HOST.matcher(value).matches()) {
      throw ApiError.invalid(
          field,
          field
              + " must be a host name or an IP address, not a URL (no scheme, path or"
              + " port; Redfish is always HTTPS)");
    }
  }

  private static void atMostBytes(String field, String value, int limit) {
    int bytes = value.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > limit) {
      throw new ApiError(
          ErrorCode.ValidationError,
          "the ipmi driver (ipmitool, IPMI 2.0 lanplus) takes a "
              + field
              + " of at most "
              + limit
              + " bytes; this one has "
              + bytes,
          field,
          new JsonObject().put("maxBytes", limit));
    }
  }

  private static void noControlCharacters(String field, String value) {
    if (value != null && value.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
      throw ApiError.invalid(
          field, field + " must not contain control characters (NUL, newline, tab, ...)");
    }
  }
}
