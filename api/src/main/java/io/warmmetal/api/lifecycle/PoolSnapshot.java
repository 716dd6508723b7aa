package io.warmmetal.api.lifecycle;

import java.util.List;

/**
 * What a pool pass decides over: every pool's target and the machines that matter to pools or to the standby tier
 * — free machines of pooled shapes in {@code warm}, {@code preparing} or {@code standby}, and every machine with
 * power control that is in service — oldest (lowest seq) first.
 */
public record PoolSnapshot(List<Target> pools, List<Member> machines) {

  /** A pool: its shape, its bounds, and the deficit recorded by the last pass. */
  public record Target(String shape, int minWarm, int maxWarm, int recordedDeficit) {}

  /**
   * A machine as pools see it.
   *
   * @param free         neither cordoned nor carrying an instance: a pool may count it and move it
   * @param powerControl the API can switch it (the standby tier's)
   * @param switchedOff  the API last switched it off
   */
  public record Member(String id, String shape, MachineState state, boolean free, boolean powerControl,
      boolean switchedOff) {}
}
