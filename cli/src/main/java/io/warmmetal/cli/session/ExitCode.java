package io.warmmetal.cli.session;

/** The exit codes scripts can rely on. */
public final class ExitCode {
  public static final int OK = 0;

  /** The API answered with an error. */
  public static final int API_ERROR = 1;

  /** A usage error (picocli's own code for invalid input). */
  public static final int USAGE = 2;

  /** The API could not be reached (connection refused, DNS, TLS, timeout). */
  public static final int UNREACHABLE = 3;

  /** {@code --wait} timed out, or an instance failed. */
  public static final int WAIT_FAILED = 4;

  private ExitCode() {}
}
