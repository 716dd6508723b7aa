package io.warmmetal.cli.http;

import com.fasterxml.jackson.databind.JsonNode;

/** The API answered with its error shape (or something else that is not a success). */
public final class ApiException extends RuntimeException {
  private final int status;
  private final String code;
  private final String path;
  private final JsonNode details;
  private final Integer retryAfter;

  public ApiException(int status, String code, String message, String path, JsonNode details, Integer retryAfter) {
    super(message);
    this.status = status;
    this.code = code;
    this.path = path;
    this.details = details;
    this.retryAfter = retryAfter;
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  /** The request path, to name the resource in a 404's hint. */
  public String path() {
    return path;
  }

  public JsonNode details() {
    return details;
  }

  /** Seconds from the Retry-After header of a 503, or null. */
  public Integer retryAfter() {
    return retryAfter;
  }
}
