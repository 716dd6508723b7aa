package io.warmmetal.api.power;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The standby tier, level-triggered after every pool pass: a machine with power control that the pool holds in
 * {@code standby} is switched off; one that is needed again — prepared for the pool, or claimed by a launch that
 * waits for standby capacity — is switched back on, and its agent, once booted, takes the queued {@code prepare}.
 * Switching runs in the background, one call per machine at a time; a machine whose switch failed is left alone
 * for a minute (an event says why) rather than retried every pass.
 */
public final class StandbyPower {
  private static final Logger LOG = LoggerFactory.getLogger(StandbyPower.class);
  private static final long RETRY_AFTER_MILLIS = 60_000;
  /** Switches under way at once, per replica: the rest wait for a later pass. */
  private static final int MAX_IN_FLIGHT = 8;

  private final Pool db;
  private final MachinePower power;
  private final Set<String> switching = ConcurrentHashMap.newKeySet();
  private final Map<String, Long> failedAt = new ConcurrentHashMap<>();

  public StandbyPower(Pool db, MachinePower power) {
    this.db = db;
    this.power = power;
  }

  /** Starts the switches the machines' states call for; completes once they are started, not done. */
  public Future<Void> apply() {
    return db.query("""
            SELECT m.id, m.state = 'standby' AS idle FROM machines m JOIN machine_power p ON p.machine_id = m.id
            WHERE (m.state = 'standby' AND NOT m.cordoned AND m.instance_id IS NULL
                   AND m.power_state IS DISTINCT FROM 'off')
               OR (m.state IN ('preparing', 'warm', 'joining', 'in-use', 'resetting') AND m.power_state = 'off')""")
        .execute()
        .map(rows -> {
          List<String> off = new ArrayList<>();
          List<String> on = new ArrayList<>();
          rows.forEach(r -> (r.getBoolean("idle") ? off : on).add(r.getString("id")));
          off.forEach(id -> start(id, PowerState.OFF, "standby: the pool holds it in reserve"));
          on.forEach(id -> start(id, PowerState.ON, "needed: leaving standby"));
          return null;
        });
  }

  private void start(String machineId, PowerState state, String reason) {
    Long failed = failedAt.get(machineId);
    if (failed != null && System.currentTimeMillis() - failed < RETRY_AFTER_MILLIS) {
      return;
    }
    if (switching.size() >= MAX_IN_FLIGHT || !switching.add(machineId)) {
      return; // one switch per machine at a time; the next pass looks again
    }
    power.switchTo(machineId, state, reason, false)
        .onSuccess(x -> failedAt.remove(machineId))
        .onFailure(err -> {
          if (err instanceof MachinePower.NoLongerIdle) {
            return; // claimed meanwhile: nothing to switch off
          }
          failedAt.put(machineId, System.currentTimeMillis());
          LOG.warn("Switching machine {} {} failed: {}", machineId, state, err.getMessage());
          db.preparedQuery("""
                  INSERT INTO events (type, subject, machine_id, to_state, reason)
                  VALUES ('MachinePowerFailed', $1, $1, $2, $3)""")
              .execute(io.vertx.sqlclient.Tuple.of(machineId, state.name().toLowerCase(), err.getMessage()));
        })
        .onComplete(x -> switching.remove(machineId));
  }
}
