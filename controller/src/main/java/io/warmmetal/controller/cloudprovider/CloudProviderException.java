package io.warmmetal.controller.cloudprovider;

import java.time.Duration;

/**
 * What the fleet answered instead of doing it, typed by the error shape's stable {@code code} (as
 * upstream's {@code cloudprovider} errors): callers decide by type, never by an HTTP status. Only
 * {@link InsufficientCapacity} and {@link QuotaExceeded} mean "not now, plan elsewhere"; an {@link
 * Unavailable} fleet is retried — with the same client token — and never read as no capacity.
 */
public abstract sealed class CloudProviderException extends Exception {
  private CloudProviderException(String message) {
    super(message);
  }

  /** No machine of the shapes asked for (or none of them offered to this project any more). */
  public static final class InsufficientCapacity extends CloudProviderException {
    public InsufficientCapacity(String message) {
      super(message);
    }
  }

  /** The project's quota has no room for another instance of the shapes asked for. */
  public static final class QuotaExceeded extends CloudProviderException {
    public QuotaExceeded(String message) {
      super(message);
    }
  }

  /**
   * The fleet could not answer now (an outage, overload, a dropped connection): the same request
   * again after {@code retryAfter}. Never a statement about capacity.
   */
  public static final class Unavailable extends CloudProviderException {
    private final Duration retryAfter;

    public Unavailable(String message, Duration retryAfter) {
      super(message);
      this.retryAfter = retryAfter;
    }

    /** How long to wait before asking again (the answer's Retry-After, else a second). */
    public Duration retryAfter() {
      return retryAfter;
    }
  }

  /** The instance (or machine) is not there: gone already, or never made. */
  public static final class NotFound extends CloudProviderException {
    public NotFound(String message) {
      super(message);
    }
  }

  /**
   * The node class cannot be used to reach its fleet: no such node class, or its credentials Secret
   * is missing or lacks the key.
   */
  public static final class NodeClassNotReady extends CloudProviderException {
    public NodeClassNotReady(String message) {
      super(message);
    }
  }

  /**
   * NodeOverlays are on and have not been evaluated for the NodePool yet: its instance types would
   * be priced and sized wrongly, so it waits (upstream's {@code UnevaluatedNodePoolError}).
   */
  public static final class UnevaluatedNodePool extends CloudProviderException {
    public UnevaluatedNodePool(String nodePool) {
      super("nodepool \"" + nodePool + "\" is awaiting evaluation");
    }
  }

  /**
   * The fleet refused the request as made (a bad token, a request it finds invalid): asking again
   * will not help until something changes.
   */
  public static final class Rejected extends CloudProviderException {
    private final String code;

    public Rejected(String code, String message) {
      super(message);
      this.code = code;
    }

    /** The error shape's stable code. */
    public String code() {
      return code;
    }
  }
}
