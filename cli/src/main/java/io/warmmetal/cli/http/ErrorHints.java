package io.warmmetal.cli.http;

import java.util.Map;

/** What to do about an API error, where the error alone does not say. */
public final class ErrorHints {
  private static final Map<String, String> SINGULAR = Map.of(
      "instances", "instance", "machines", "machine", "shapes", "shape", "pools", "pool (no target for shape)",
      "tokens", "token", "enrollment-tokens", "enrollment token", "projects", "project", "commands", "command",
      "hardware", "hardware record");

  private ErrorHints() {}

  /** A hint for the error, or null. */
  public static String hint(ApiException e) {
    return switch (e.status()) {
      case 401 -> "check WARMMETAL_TOKEN or `warmmetal config set token`";
      case 403 -> "QuotaExceeded".equals(e.code())
          ? "the project's quota is full: `warmmetal projects get` shows what is in use"
          : "the token's role does not allow this, or the project named is not the token's (see docs/tenancy.md)";
      case 404 -> notFound(e.path());
      case 409 -> "IdempotentParameterMismatch".equals(e.code())
          ? "that client token was used with other parameters: give a new --client-token" : null;
      case 429, 503 -> "retry after " + (e.retryAfter() == null ? "a few" : e.retryAfter())
          + " seconds (Retry-After)";
      default -> null;
    };
  }

  /** {@code /v1/instances/i-…} → "no instance i-… (or it belongs to another project)". */
  static String notFound(String path) {
    String[] parts = path.split("\\?")[0].split("/");
    if (parts.length >= 4 && SINGULAR.containsKey(parts[2])) {
      return "no " + SINGULAR.get(parts[2]) + " " + parts[3] + " (or not one this token's project can see)";
    }
    return null;
  }
}
