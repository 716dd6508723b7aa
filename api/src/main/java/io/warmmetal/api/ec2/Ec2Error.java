package io.warmmetal.api.ec2;

import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;

/**
 * A refusal in EC2's words: its error code (which SDKs match on, and whose HTTP status their retry
 * logic reads) and a message naming the problem.
 */
final class Ec2Error extends RuntimeException {
  private final String code;
  private final int status;
  private final int retryAfterSeconds;

  Ec2Error(String code, int status, String message) {
    this(code, status, message, 0);
  }

  private Ec2Error(String code, int status, String message, int retryAfterSeconds) {
    super(message, null, false, false);
    this.code = code;
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  String code() {
    return code;
  }

  int status() {
    return status;
  }

  int retryAfterSeconds() {
    return retryAfterSeconds;
  }

  static Ec2Error invalidValue(String parameter, String message) {
    return new Ec2Error(
        "InvalidParameterValue", 400, "Value for parameter " + parameter + " " + message);
  }

  static Ec2Error missing(String parameter) {
    return new Ec2Error(
        "MissingParameter", 400, "The request must contain the parameter " + parameter);
  }

  static Ec2Error invalidFilter(String name) {
    return new Ec2Error("InvalidParameterValue", 400, "The filter '" + name + "' is invalid");
  }

  /**
   * The JSON API's refusal as EC2 would say it. A 5xx stays a 5xx, so an SDK retries it (an outage
   * is never "no capacity").
   */
  static Ec2Error from(ApiError error, String notFoundCode) {
    ErrorCode c = error.code();
    String message = error.getMessage();
    return switch (c) {
      case ValidationError -> new Ec2Error("InvalidParameterValue", 400, message);
      case Unauthorized -> new Ec2Error("AuthFailure", 401, message);
      case Forbidden -> new Ec2Error("UnauthorizedOperation", 403, message);
      // A field names what was not found when it is not the resource (a WarmMetal-Project header).
      case NotFound ->
          new Ec2Error(
              error.field() == null ? notFoundCode : "InvalidParameterValue", 400, message);
      case IdempotentParameterMismatch -> new Ec2Error("IdempotentParameterMismatch", 400, message);
      case QuotaExceeded -> new Ec2Error("InstanceLimitExceeded", 400, message);
      case InvalidState -> new Ec2Error("IncorrectInstanceState", 400, message);
      case Conflict -> new Ec2Error("IncorrectState", 400, message);
      case RequestTooLarge, UriTooLong, HeadersTooLarge ->
          new Ec2Error("RequestTooLarge", c.status(), message);
      case RequestTimeout -> new Ec2Error("RequestTimeout", 408, message);
      case TooManyRequests ->
          new Ec2Error("RequestLimitExceeded", 503, message, error.retryAfterSeconds());
      // No Retry-After, as EC2 sends none: an SDK's backoff retries it at once, a caller decides.
      case InsufficientCapacity -> new Ec2Error("InsufficientInstanceCapacity", 503, message);
      case ServiceUnavailable ->
          new Ec2Error("Unavailable", 503, message, error.retryAfterSeconds());
      case RemoteFailure -> new Ec2Error("Unavailable", 503, message, 1);
      case MethodNotAllowed, UnsupportedMediaType, ExpectationFailed, HttpVersionNotSupported ->
          new Ec2Error("InvalidRequest", c.status(), message);
      case InternalError -> new Ec2Error("InternalError", 500, message);
    };
  }
}
