package io.warmmetal.api.http;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.lifecycle.Refusal;

/**
 * A failure the client should see: a stable {@link ErrorCode}, a message naming the problem,
 * optionally the offending field and details. Thrown or failed into a future by any handler; {@link
 * ErrorResponses} renders it.
 */
public final class ApiError extends RuntimeException {
  private final ErrorCode code;
  private final String field;
  private final JsonObject details;
  private final int retryAfterSeconds;

  public ApiError(ErrorCode code, String message, String field, JsonObject details) {
    this(code, message, field, details, 0);
  }

  private ApiError(
      ErrorCode code, String message, String field, JsonObject details, int retryAfterSeconds) {
    super(message, null, false, false);
    this.code = code;
    this.field = field;
    this.details = details;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /**
   * Too many requests: try again in {@code seconds} (at least 1), which the response's Retry-After
   * says.
   */
  public static ApiError tooManyRequests(String message, long seconds) {
    return new ApiError(
        ErrorCode.TooManyRequests,
        message,
        null,
        null,
        (int) Math.max(1, Math.min(seconds, 86_400)));
  }

  /** The Retry-After this answer carries, in seconds: its own, else its code's (0: none). */
  public int retryAfterSeconds() {
    return retryAfterSeconds > 0 ? retryAfterSeconds : code.retryAfterSeconds();
  }

  public static ApiError of(ErrorCode code, String message) {
    return new ApiError(code, message, null, null);
  }

  /** The core's refusal in the API's error shape. */
  public static ApiError from(Refusal refusal) {
    return new ApiError(
        ErrorCode.of(refusal.reason()), refusal.getMessage(), refusal.field(), refusal.details());
  }

  public static ApiError invalid(String field, String message) {
    return new ApiError(ErrorCode.ValidationError, message, field, null);
  }

  public static ApiError notFound(String what, String id) {
    return new ApiError(ErrorCode.NotFound, what + " " + id + " does not exist", null, null);
  }

  public ErrorCode code() {
    return code;
  }

  public String field() {
    return field;
  }

  public JsonObject details() {
    return details;
  }

  public JsonObject toJson(String requestId) {
    JsonObject json = new JsonObject().put("code", code.name()).put("message", getMessage());
    if (field != null) {
      json.put("field", field);
    }
    if (details != null) {
      json.put("details", details);
    }
    if (requestId != null) {
      json.put("requestId", requestId);
    }
    return json;
  }
}
