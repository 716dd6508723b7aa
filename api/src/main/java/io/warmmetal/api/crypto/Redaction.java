package io.warmmetal.api.crypto;

import java.util.Collection;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Redacts secrets from text that is about to be stored where others read it (events, command
 * messages): known secrets, kubeadm bootstrap tokens, and anything assigned to a secret-sounding
 * name.
 */
public final class Redaction {
  /** A kubeadm bootstrap token ({@code abcdef.0123456789abcdef}), which join output may echo. */
  private static final Pattern BOOTSTRAP_TOKEN =
      Pattern.compile("\\b[a-z0-9]{6}\\.[a-z0-9]{16}\\b");

  private static final Pattern SECRET_ASSIGNMENT =
      Pattern.compile(
          "(?i)((?:token|password|passwd|secret|private[_-]?key)[A-Za-z_]*\\s*[=:]\\s*)\\S+");

  private Redaction() {}

  public static String redact(String text) {
    return redact(text, List.of());
  }

  /**
   * {@code text} with every known secret, bootstrap token and secret-sounding assignment replaced.
   */
  public static String redact(String text, Collection<String> secrets) {
    String out = text;
    for (String secret : secrets) {
      if (secret != null && !secret.isEmpty()) {
        out = out.replace(secret, "[redacted]");
      }
    }
    out = BOOTSTRAP_TOKEN.matcher(out).replaceAll("[redacted]");
    return SECRET_ASSIGNMENT.matcher(out).replaceAll("$1[redacted]");
  }
}
