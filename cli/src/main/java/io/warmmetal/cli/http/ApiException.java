package io.warmmetal.cli.http;

import com.fasterxml.jackson.databind.JsonNode;

/** The API answered with its error shape (or something else that is not a success). */
public final class ApiException extends RuntimeException {
  private final int status;
  private final String code;
  private final Request request;
  private final String field;
  private final JsonNode details;
  private final Integer retryAfter;
  private final String hint;

  /** What was asked: the path, and the project the request named (WarmMetal-Project), or null. */
  public record Request(String path, String project) {}

  public ApiException(
      int status,
      String code,
      String message,
      Request request,
      String field,
      JsonNode details,
      Integer retryAfter) {
    this(status, code, message, request, field, details, retryAfter, null);
  }

  private ApiException(
      int status,
      String code,
      String message,
      Request request,
      String field,
      JsonNode details,
      Integer retryAfter,
      String hint) {
    super(message);
    this.status = status;
    this.code = code;
    this.request = request;
    this.field = field;
    this.details = details;
    this.retryAfter = retryAfter;
    this.hint = hint;
  }

  /**
   * The same error with what to do about it, from a command that knows more than the error says.
   */
  public ApiException withHint(String commandHint) {
    return new ApiException(
        status, code, getMessage(), request, field, details, retryAfter, commandHint);
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  /** The request path, to name the resource in a 404's hint. */
  public String path() {
    return request.path();
  }

  /** The project the request named in its header, or null (the token's own). */
  public String project() {
    return request.project();
  }

  /** The input the API blamed (a body field, a parameter or a header), or null. */
  public String field() {
    return field;
  }

  public JsonNode details() {
    return details;
  }

  /** Seconds from the Retry-After header of a 503, or null. */
  public Integer retryAfter() {
    return retryAfter;
  }

  /**
   * The hint a command gave (see {@link #withHint}), or null: {@link ErrorHints} then says what it
   * can.
   */
  public String hint() {
    return hint;
  }
}
