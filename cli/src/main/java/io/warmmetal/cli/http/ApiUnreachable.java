package io.warmmetal.cli.http;

/** No answer from the API: refused, unresolvable, a TLS failure, a timeout. */
public final class ApiUnreachable extends RuntimeException {
  public ApiUnreachable(String message, Throwable cause) {
    super(message, cause);
  }
}
