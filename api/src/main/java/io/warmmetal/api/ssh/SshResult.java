package io.warmmetal.api.ssh;

import io.vertx.core.json.JsonObject;

/**
 * What a command run over SSH did: its exit status (null if it did not finish), its output (each
 * stream capped at {@link SshRunner#OUTPUT_LIMIT} bytes), and whether it was stopped at its
 * timeout.
 */
public record SshResult(Integer exitStatus, String stdout, String stderr, boolean timedOut) {
  /**
   * For events: the exit status, whether it timed out, and {@code output} (already redacted by the
   * caller).
   */
  public JsonObject toJson(String output) {
    return new JsonObject()
        .put("exitStatus", exitStatus)
        .put("timedOut", timedOut)
        .put("output", output);
  }

  public boolean succeeded() {
    return !timedOut && exitStatus != null && exitStatus == 0;
  }
}
