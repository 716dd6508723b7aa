package io.warmmetal.api.ssh;

/** Shell quoting for commands sent over SSH. */
public final class Shell {
  private Shell() {}

  /** {@code s} as one single-quoted shell word. */
  public static String quote(String s) {
    return "'" + s.replace("'", "'\"'\"'") + "'";
  }
}
