package io.warmmetal.api.lifecycle;

import io.vertx.core.json.JsonObject;

/**
 * The core saying no: a stable {@link Reason}, a message naming the problem, optionally the
 * offending input field and details. It knows nothing of HTTP; the edges decide what a reason means
 * on their wire (the HTTP edge: a status and the error shape).
 */
public final class Refusal extends RuntimeException {
  /** Why, as clients and edges match on it; never renamed (the names double as metric labels). */
  public enum Reason {
    /** The input names or holds something unacceptable ({@code field} says which). */
    ValidationError,
    /** The credential presented (an enrollment token, a certificate) is not (or no longer) good. */
    Unauthorized,
    /** The caller may not do this to that (another machine's command, a replaced certificate). */
    Forbidden,
    NotFound,
    /**
     * It clashes with what exists (a second machine with the same identity, a result already
     * reported).
     */
    Conflict,
    /** What it is asked to change is not in a state that allows it. */
    InvalidState,
    /** A client token reused with different parameters. */
    IdempotentParameterMismatch,
    /** Too few machines can be had now. */
    InsufficientCapacity,
    /** The project's quota for the shape leaves too little room. */
    QuotaExceeded,
    /** A result that would overtake an earlier command still open: send it again later. */
    EarlierCommandOpen
  }

  private final Reason reason;
  private final String field;
  private final JsonObject details;

  public Refusal(Reason reason, String message, String field, JsonObject details) {
    super(message, null, false, false); // expected outcomes: no stack trace
    this.reason = reason;
    this.field = field;
    this.details = details;
  }

  public static Refusal of(Reason reason, String message) {
    return new Refusal(reason, message, null, null);
  }

  public static Refusal invalid(String field, String message) {
    return new Refusal(Reason.ValidationError, message, field, null);
  }

  public static Refusal notFound(String what, String id) {
    return of(Reason.NotFound, what + " " + id + " does not exist");
  }

  public Reason reason() {
    return reason;
  }

  /** The input field at fault, or null. */
  public String field() {
    return field;
  }

  /** Machine-readable details, or null. */
  public JsonObject details() {
    return details;
  }
}
