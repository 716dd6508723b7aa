package io.warmmetal.api.lifecycle;

import java.util.List;

/**
 * What a pool pass decides over: every pool's target and the machines that matter to pools or to
 * the standby tier — free machines of pooled shapes in {@code warm}, {@code preparing}, {@code
 * standby} or {@code rebooting}, and every machine with power control that is in service — oldest
 * (lowest seq) first.
 */
public record PoolSnapshot(List<Target> pools, List<Member> machines) {

  /**
   * A pool: its shape, its bounds, the deficit recorded by the last pass, and the node image its
   * machines should run (null: whichever they booted).
   */
  public record Target(String shape, int minWarm, int maxWarm, int recordedDeficit, String image) {
    public Target(String shape, int minWarm, int maxWarm, int recordedDeficit) {
      this(shape, minWarm, maxWarm, recordedDeficit, null);
    }
  }

  /**
   * A machine as pools see it.
   *
   * @param free neither cordoned nor carrying an instance: a pool may count it and move it
   * @param powerControl the API can switch it (the standby tier's)
   * @param switchedOff the API last switched it off
   * @param image the node image it booted, as its agent reported (null: unknown, or not
   *     WarmMetal's)
   */
  public record Member(
      String id,
      String shape,
      MachineState state,
      boolean free,
      boolean powerControl,
      boolean switchedOff,
      String image) {
    public Member(
        String id,
        String shape,
        MachineState state,
        boolean free,
        boolean powerControl,
        boolean switchedOff) {
      this(id, shape, state, free, powerControl, switchedOff, null);
    }
  }
}
