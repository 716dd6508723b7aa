package io.warmmetal.api.lifecycle;

import java.util.List;

/**
 * What one pool pass decided, for the appliers: the lifecycle moves machines and records deficits,
 * the standby tier switches power.
 *
 * @param prepare standby machines to prepare ({@code standby → preparing}, a {@code prepare}
 *     queued)
 * @param park surplus warm machines to hold in reserve ({@code warm → standby})
 * @param deficits every pool's shortfall of {@code minWarm} after the pass
 * @param powerOff machines with power control to switch off: idle in standby
 * @param powerOn machines with power control to switch on: needed again, yet switched off
 * @param reboot machines to reboot into their pool's image ({@code → rebooting}, a {@code reboot}
 *     queued)
 */
public record PoolDecisions(
    List<String> prepare,
    List<String> park,
    List<Deficit> deficits,
    List<String> powerOff,
    List<String> powerOn,
    List<Reboot> reboot) {

  /** A machine on another image than its pool's, from the state the pass saw it in. */
  public record Reboot(String machineId, MachineState from, String image) {}

  /** A pool's shortfall; {@code changed}: it differs from the recorded one (an event says so). */
  public record Deficit(String shape, int minWarm, int deficit, boolean changed) {}
}
