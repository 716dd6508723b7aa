package io.warmmetal.api.http;

import io.warmmetal.api.lifecycle.Refusal;

/**
 * The stable error codes of the API, each with its HTTP status. Clients match on the code, never
 * the message.
 */
public enum ErrorCode {
  ValidationError(400),
  Unauthorized(401),
  Forbidden(403),
  NotFound(404),
  MethodNotAllowed(405),
  IdempotentParameterMismatch(409),
  QuotaExceeded(403),
  InvalidState(409),
  Conflict(409),
  RequestTimeout(408),
  RequestTooLarge(413),
  UriTooLong(414),
  UnsupportedMediaType(415),
  /**
   * Too many requests of this kind from this caller (a boot token minting enrollment tokens):
   * Retry-After says.
   */
  TooManyRequests(429),
  ExpectationFailed(417),
  HeadersTooLarge(431),
  InternalError(500),
  RemoteFailure(502),
  InsufficientCapacity(503),
  ServiceUnavailable(503),
  /** A request line with a version other than HTTP/1.1 and 1.0 (HTTP/2 included). */
  HttpVersionNotSupported(505);

  private final int status;

  ErrorCode(int status) {
    this.status = status;
  }

  public int status() {
    return status;
  }

  /**
   * The Retry-After a response with this code carries, in seconds; 0 for none (the same request
   * will fail again). A database outage is usually a restart or a failover: seconds. Capacity comes
   * back as machines are prepared.
   */
  public int retryAfterSeconds() {
    return switch (this) {
      case ServiceUnavailable -> 2;
      case InsufficientCapacity -> 5;
      case TooManyRequests -> 1;
      default -> 0;
    };
  }

  /**
   * The code the core's refusal reason has on the wire: the one place a reason becomes an HTTP
   * status.
   */
  public static ErrorCode of(Refusal.Reason reason) {
    return switch (reason) {
      case ValidationError -> ValidationError;
      case Unauthorized -> Unauthorized;
      case Forbidden -> Forbidden;
      case NotFound -> NotFound;
      case Conflict -> Conflict;
      case InvalidState, EarlierCommandOpen -> InvalidState;
      case IdempotentParameterMismatch -> IdempotentParameterMismatch;
      case InsufficientCapacity -> InsufficientCapacity;
      case QuotaExceeded -> QuotaExceeded;
    };
  }
}
