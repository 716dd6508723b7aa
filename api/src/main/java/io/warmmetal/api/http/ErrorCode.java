package io.warmmetal.api.http;

/** The stable error codes of the API, each with its HTTP status. Clients match on the code, never the message. */
public enum ErrorCode {
  ValidationError(400),
  Unauthorized(401),
  Forbidden(403),
  NotFound(404),
  MethodNotAllowed(405),
  IdempotentParameterMismatch(409),
  InvalidState(409),
  Conflict(409),
  RequestTooLarge(413),
  UnsupportedMediaType(415),
  InternalError(500),
  RemoteFailure(502),
  InsufficientCapacity(503),
  ServiceUnavailable(503);

  private final int status;

  ErrorCode(int status) {
    this.status = status;
  }

  public int status() {
    return status;
  }
}
