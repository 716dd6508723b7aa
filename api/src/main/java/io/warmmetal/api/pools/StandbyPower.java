package io.warmmetal.api.pools;

import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.power.MachinePower;
import io.warmmetal.api.power.PowerState;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The standby tier: carries out a pool pass's power decisions (which machines go off, which on, is
 * {@code PoolPlanner}'s to say). A machine switched back on boots, and its agent takes the queued
 * {@code prepare} or join. Switching runs in the background, one call per machine at a time; a
 * machine whose switch failed is left alone for a minute (an event says why) rather than retried
 * every pass.
 */
final class StandbyPower {
  private static final Logger LOG = LoggerFactory.getLogger(StandbyPower.class);
  private static final long RETRY_AFTER_MILLIS = 60_000;

  /** Switches under way at once, per replica: the rest wait for a later pass. */
  private static final int MAX_IN_FLIGHT = 8;

  private final Pool db;
  private final MachinePower power;
  private final Set<String> switching = ConcurrentHashMap.newKeySet();
  private final Map<String, Long> failedAt = new ConcurrentHashMap<>();

  StandbyPower(Pool db, MachinePower power) {
    this.db = db;
    this.power = power;
  }

  /** Starts the switches; returns once they are started, not done. */
  void apply(List<String> off, List<String> on) {
    off.forEach(id -> start(id, PowerState.OFF, "standby: the pool holds it in reserve"));
    on.forEach(id -> start(id, PowerState.ON, "needed: leaving standby"));
  }

  /**
   * The event's reason: events are readable with {@code read}, and a driver's message names the BMC
   * (address, username), which only out-of-band callers may see; the log keeps it.
   */
  static final String FAILED_REASON = "the switch failed; the API's log has the driver's message";

  private void start(String machineId, PowerState state, String reason) {
    Long failed = failedAt.get(machineId);
    if (failed != null && System.currentTimeMillis() - failed < RETRY_AFTER_MILLIS) {
      return;
    }
    if (switching.size() >= MAX_IN_FLIGHT || !switching.add(machineId)) {
      return; // one switch per machine at a time; the next pass looks again
    }
    power
        .switchTo(machineId, state, reason, false)
        .onSuccess(x -> failedAt.remove(machineId))
        .onFailure(
            err -> {
              if (err instanceof MachinePower.NoLongerIdle) {
                return; // claimed meanwhile: nothing to switch off
              }
              failedAt.put(machineId, System.currentTimeMillis());
              LOG.warn("Switching machine {} {} failed: {}", machineId, state, err.getMessage());
              db.preparedQuery(
                      """
                  INSERT INTO events (type, subject, machine_id, to_state, reason)
                  VALUES ('MachinePowerFailed', $1, $1, $2, $3)""")
                  .execute(Tuple.of(machineId, state.name().toLowerCase(), FAILED_REASON));
            })
        .onComplete(x -> switching.remove(machineId));
  }
}
