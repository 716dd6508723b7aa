package io.warmmetal.api.power;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Live looks at machines' power, rationed: a BMC session is slow and a BMC serves few at once, so
 * callers of one machine share the look under way, a repeat within {@code minInterval} of the last
 * answer gets that answer, and at most {@code maxInFlight} looks run across all machines (more:
 * 503).
 */
final class Observations {
  /** What a live look found (a state, or why there is none) and when it ended. */
  record Observation(PowerState state, String error, Instant at) {}

  /** An observation, and whether it was shared with (or kept from) another caller's look. */
  record Answer(Observation observation, boolean reused) {}

  private static final class Slot {
    Future<Observation> running;
    Observation last;
  }

  private final Duration minInterval;
  private final int maxInFlight;
  private final Map<String, Slot> slots = new HashMap<>();
  private int inFlight;

  Observations(Duration minInterval, int maxInFlight) {
    this.minInterval = minInterval;
    this.maxInFlight = maxInFlight;
  }

  /** The machine's power as {@code look} finds it now, or as a recent or running look found it. */
  Future<Answer> observe(String machineId, Supplier<Future<PowerState>> look) {
    Slot slot;
    Promise<Observation> started = Promise.promise();
    synchronized (this) {
      slot = slots.computeIfAbsent(machineId, id -> new Slot());
      if (slot.running != null) {
        return slot.running.map(o -> new Answer(o, true));
      }
      if (slot.last != null && slot.last.at().plus(minInterval).isAfter(Instant.now())) {
        return Future.succeededFuture(new Answer(slot.last, true));
      }
      if (inFlight >= maxInFlight) {
        return Future.failedFuture(
            ApiError.of(
                ErrorCode.ServiceUnavailable,
                maxInFlight
                    + " live power"
                    + " observations are already under way; try again shortly, or read the recorded state without observe"));
      }
      inFlight++;
      slot.running = started.future();
    }
    Future<PowerState> found;
    try {
      found = look.get();
    } catch (RuntimeException e) {
      found = Future.failedFuture(e);
    }
    found.onComplete(
        ar -> {
          Observation o =
              new Observation(
                  ar.succeeded() ? ar.result() : null,
                  ar.succeeded() ? null : String.valueOf(ar.cause().getMessage()),
                  Instant.now());
          synchronized (this) {
            inFlight--;
            slot.running = null;
            slot.last =
                o; // a forgotten slot is no longer in the map: its answer reaches only its own
            // callers
          }
          started.complete(o);
        });
    return started.future().map(o -> new Answer(o, false));
  }

  /**
   * Forgets the machine's looks (it was switched or reconfigured: what they found may be stale);
   * the next caller starts a new one, even while an older one is still running.
   */
  synchronized void forget(String machineId) {
    slots.remove(machineId);
  }
}
