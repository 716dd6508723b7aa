package io.warmmetal.api.lifecycle;

import static io.warmmetal.api.lifecycle.MachineState.IN_USE;
import static io.warmmetal.api.lifecycle.MachineState.JOINING;
import static io.warmmetal.api.lifecycle.MachineState.NEW;
import static io.warmmetal.api.lifecycle.MachineState.PREPARING;
import static io.warmmetal.api.lifecycle.MachineState.REBOOTING;
import static io.warmmetal.api.lifecycle.MachineState.STANDBY;
import static io.warmmetal.api.lifecycle.MachineState.WARM;
import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.api.lifecycle.PoolDecisions.Deficit;
import io.warmmetal.api.lifecycle.PoolDecisions.Reboot;
import io.warmmetal.api.lifecycle.PoolSnapshot.Member;
import io.warmmetal.api.lifecycle.PoolSnapshot.Target;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The pools' decisions over snapshots, without a database. Machines are listed oldest first, as
 * snapshots are.
 */
class PoolPlannerTest {
  private static final String S = "x86-16c-64g";
  private static final String OTHER = "arm-8c-32g";

  private static Member free(String id, MachineState state) {
    return new Member(id, S, state, true, false, false);
  }

  private static Member powered(String id, MachineState state, boolean free, boolean off) {
    return new Member(id, S, state, free, true, off);
  }

  private static PoolDecisions decide(List<Target> pools, Member... machines) {
    return PoolPlanner.decide(new PoolSnapshot(pools, List.of(machines)));
  }

  @Test
  void belowMinWarmTheOldestStandbyMachinesArePreparedAndTheRestIsTheDeficit() {
    PoolDecisions d =
        decide(
            List.of(new Target(S, 4, 10, 0)),
            free("w1", WARM),
            free("s1", STANDBY),
            free("s2", STANDBY));

    assertThat(d.prepare()).containsExactly("s1", "s2");
    assertThat(d.deficits()).containsExactly(new Deficit(S, 4, 1, true));
    assertThat(d.park()).isEmpty();
  }

  @Test
  void newHardwareWaitingForAcceptanceIsNeverPreparedCountedOrSwitched() {
    // A pool short of machines, with only new hardware of its shape (one with power control,
    // switched on).
    PoolDecisions d =
        decide(
            List.of(new Target(S, 2, 10, 0, "v2")),
            free("n1", NEW),
            powered("n2", NEW, true, false),
            powered("n3", NEW, true, true));

    assertThat(d.prepare()).isEmpty();
    assertThat(d.deficits()).containsExactly(new Deficit(S, 2, 2, true));
    assertThat(d.park()).isEmpty();
    assertThat(d.reboot()).isEmpty();
    assertThat(d.powerOff()).isEmpty();
    assertThat(d.powerOn()).isEmpty();
  }

  @Test
  void preparingMachinesCountTowardsMinWarm() {
    PoolDecisions d =
        decide(
            List.of(new Target(S, 2, 10, 0)),
            free("p1", PREPARING),
            free("w1", WARM),
            free("s1", STANDBY));

    assertThat(d.prepare()).isEmpty();
    assertThat(d.deficits()).containsExactly(new Deficit(S, 2, 0, false));
  }

  @Test
  void aboveMaxWarmTheNewestWarmMachinesAreParked() {
    PoolDecisions d =
        decide(
            List.of(new Target(S, 1, 2, 0)),
            free("w1", WARM),
            free("w2", WARM),
            free("w3", WARM),
            free("w4", WARM));

    assertThat(d.park()).containsExactly("w4", "w3");
    assertThat(d.prepare()).isEmpty();
  }

  @Test
  void cordonedOrClaimedMachinesNeitherCountNorMove() {
    PoolDecisions d =
        decide(
            List.of(new Target(S, 2, 2, 0)),
            new Member("w1", S, WARM, false, false, false),
            new Member("s1", S, STANDBY, false, false, false),
            free("s2", STANDBY));

    assertThat(d.prepare()).containsExactly("s2");
    assertThat(d.deficits()).containsExactly(new Deficit(S, 2, 1, true));
  }

  @Test
  void eachPoolCountsOnlyItsShape() {
    PoolDecisions d =
        decide(
            List.of(new Target(S, 1, 1, 0), new Target(OTHER, 1, 1, 1)),
            new Member("o1", OTHER, WARM, true, false, false),
            free("s1", STANDBY));

    assertThat(d.prepare()).containsExactly("s1");
    assertThat(d.deficits())
        .containsExactly(new Deficit(S, 1, 0, false), new Deficit(OTHER, 1, 0, true));
  }

  @Test
  void anUnchangedDeficitIsNotAChange() {
    PoolDecisions d = decide(List.of(new Target(S, 3, 5, 3)));

    assertThat(d.deficits()).containsExactly(new Deficit(S, 3, 3, false));
  }

  @Test
  void idleStandbyMachinesWithPowerControlGoOffAndOnlyThose() {
    PoolDecisions d =
        decide(
            List.of(),
            powered("on-idle", STANDBY, true, false),
            powered("already-off", STANDBY, true, true),
            powered("cordoned", STANDBY, false, false),
            new Member("no-control", S, STANDBY, true, false, false));

    assertThat(d.powerOff()).containsExactly("on-idle");
    assertThat(d.powerOn()).isEmpty();
  }

  @Test
  void machinesNeededAgainWhileSwitchedOffGoOn() {
    PoolDecisions d =
        decide(
            List.of(new Target(S, 1, 5, 0)),
            powered("claimed", JOINING, false, true),
            powered("busy", IN_USE, false, false),
            powered("standby-off", STANDBY, true, true));

    assertThat(d.prepare()).containsExactly("standby-off");
    assertThat(d.powerOn()).containsExactly("claimed", "standby-off");
    assertThat(d.powerOff()).isEmpty();
  }

  @Test
  void aParkedMachineWithPowerControlIsSwitchedOffInTheSamePass() {
    PoolDecisions d =
        decide(
            List.of(new Target(S, 0, 1, 0)),
            powered("w1", WARM, true, false),
            powered("w2", WARM, true, false));

    assertThat(d.park()).containsExactly("w2");
    assertThat(d.powerOff()).containsExactly("w2");
  }

  private static Member on(String id, MachineState state, String image) {
    return new Member(id, S, state, true, false, false, image);
  }

  @Test
  void aPoolNamingAnImageRebootsOneMachineOnAnotherAtATimeStandbyBeforeWarm() {
    Target pool = new Target(S, 1, 5, 0, "v2");
    PoolDecisions d =
        decide(List.of(pool), on("w1", WARM, "v1"), on("s1", STANDBY, "v1"), on("w2", WARM, "v2"));
    assertThat(d.reboot()).containsExactly(new Reboot("s1", STANDBY, "v2"));

    // Standby done: the oldest warm one next; never two at once.
    d = decide(List.of(pool), on("w1", WARM, "v1"), on("w3", WARM, null), on("w2", WARM, "v2"));
    assertThat(d.reboot()).containsExactly(new Reboot("w1", WARM, "v2"));
    d =
        decide(
            List.of(pool), on("w1", WARM, "v1"), on("r1", REBOOTING, null), on("w2", WARM, "v2"));
    assertThat(d.reboot()).isEmpty();

    // All on it, or no image named: nothing to do.
    assertThat(decide(List.of(pool), on("w2", WARM, "v2")).reboot()).isEmpty();
    assertThat(decide(List.of(new Target(S, 1, 5, 0)), on("w1", WARM, "v1")).reboot()).isEmpty();
  }

  @Test
  void aMachineBeingRebootedDoesNotCountAsWarmAndStandbyOnAnotherImageIsNotPrepared() {
    // The only warm machine is on the old image: when its turn comes it reboots, and a standby
    // machine on the new
    // image is prepared to keep minWarm.
    PoolDecisions d =
        decide(
            List.of(new Target(S, 1, 5, 0, "v2")), on("w1", WARM, "v1"), on("s1", STANDBY, "v2"));
    assertThat(d.reboot()).extracting(Reboot::machineId).containsExactly("w1");
    assertThat(d.prepare()).containsExactly("s1");
    // Short of warm machines, a standby one on the old image is not prepared: it is rebooted first.
    d =
        decide(
            List.of(new Target(S, 2, 5, 0, "v2")), on("w1", WARM, "v2"), on("s2", STANDBY, "v1"));
    assertThat(d.reboot()).extracting(Reboot::machineId).containsExactly("s2");
    assertThat(d.prepare()).isEmpty();

    // A machine switched off is not rebooted (it boots the pool's image when switched on), nor
    // prepared.
    d =
        decide(
            List.of(new Target(S, 1, 5, 0, "v2")),
            new Member("s3", S, STANDBY, true, true, true, "v1"));
    assertThat(d.reboot()).isEmpty();
    assertThat(d.prepare()).isEmpty();
    assertThat(d.deficits()).containsExactly(new Deficit(S, 1, 1, true));
  }
}
