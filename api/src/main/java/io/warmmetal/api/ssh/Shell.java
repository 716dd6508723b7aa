package io.warmmetal.api.ssh;

import java.util.Collection;
import java.util.regex.Pattern;

/** Shell quoting for commands sent over SSH, and redaction of what comes back before it is stored. */
public final class Shell {
  private static final Pattern SECRET_ASSIGNMENT =
      Pattern.compile("(?i)((?:token|password|passwd|secret|private[_-]?key)[A-Za-z_]*\\s*[=:]\\s*)\\S+");

  private Shell() {}

  /** {@code s} as one single-quoted shell word. */
  public static String quote(String s) {
    return "'" + s.replace("'", "'\"'\"'") + "'";
  }

  /** {@code text} with every known secret, and anything assigned to a secret-sounding name, replaced. */
  public static String redact(String text, Collection<String> secrets) {
    String out = text;
    for (String secret : secrets) {
      if (secret != null && !secret.isEmpty()) {
        out = out.replace(secret, "[redacted]");
      }
    }
    return SECRET_ASSIGNMENT.matcher(out).replaceAll("$1[redacted]");
  }
}
