package io.warmmetal.api.lifecycle;

/**
 * How launches share database calls: launches that arrive while {@code callsInFlight} calls are
 * running go together in the next, up to {@code maxBatch} per call. A lone launch never waits for
 * company.
 */
public record LaunchBatching(int maxBatch, int callsInFlight) {

  public LaunchBatching {
    if (maxBatch < 1 || callsInFlight < 1) {
      throw new IllegalArgumentException(
          "a batch holds at least one launch, and at least one call may run");
    }
  }
}
