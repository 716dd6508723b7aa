package io.warmmetal.api.lifecycle;

import static io.warmmetal.api.lifecycle.MachineState.IN_USE;
import static io.warmmetal.api.lifecycle.MachineState.JOINING;
import static io.warmmetal.api.lifecycle.MachineState.PREPARING;
import static io.warmmetal.api.lifecycle.MachineState.PRE_JOINED;
import static io.warmmetal.api.lifecycle.MachineState.REBOOTING;
import static io.warmmetal.api.lifecycle.MachineState.RESETTING;
import static io.warmmetal.api.lifecycle.MachineState.STANDBY;
import static io.warmmetal.api.lifecycle.MachineState.WARM;

import io.warmmetal.api.lifecycle.PoolDecisions.Deficit;
import io.warmmetal.api.lifecycle.PoolDecisions.Reboot;
import io.warmmetal.api.lifecycle.PoolSnapshot.Member;
import io.warmmetal.api.lifecycle.PoolSnapshot.Target;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The one owner of the pools' decisions, a pure function of a {@link PoolSnapshot}: per pool,
 *
 * <ul>
 *   <li>warm + preparing below {@code minWarm}: the oldest standby machines are prepared; what
 *       standby cannot cover is the pool's deficit;
 *   <li>warm above {@code maxWarm}: the newest warm machines are parked in standby;
 *   <li>a pool that names a node image rolls its machines onto it, one at a time: while none of the
 *       pool is rebooting, the oldest machine on another image — standby (and switched on) before
 *       warm — is rebooted into it (it comes back through the network boot, enrolls again, and is
 *       prepared like any standby machine); standby machines on another image are not prepared
 *       meanwhile. A machine switched off needs no reboot: it boots the pool's image when it is
 *       next switched on;
 * </ul>
 *
 * then, over the states those moves lead to, the standby tier's power: idle standby machines off,
 * machines needed again (preparing, warm or claimed) on. Only free machines (uncordoned, no
 * instance) count or move. New hardware waiting for acceptance ({@code new}) is no pool's: it is
 * never prepared, parked, counted or switched.
 */
public final class PoolPlanner {
  /** States in which a machine must be running. */
  private static final Set<MachineState> NEEDS_POWER =
      EnumSet.of(PREPARING, WARM, JOINING, IN_USE, PRE_JOINED, RESETTING);

  private PoolPlanner() {}

  public static PoolDecisions decide(PoolSnapshot snapshot) {
    List<String> prepare = new ArrayList<>();
    List<String> park = new ArrayList<>();
    List<Deficit> deficits = new ArrayList<>();
    List<Reboot> reboot = new ArrayList<>();
    for (Target pool : snapshot.pools()) {
      List<Member> free =
          snapshot.machines().stream()
              .filter(m -> m.free() && m.shape().equals(pool.shape()))
              .toList();
      rollOut(pool, free).ifPresent(reboot::add);
      Set<String> rebooted = new HashSet<>();
      reboot.forEach(r -> rebooted.add(r.machineId()));
      List<String> warm = ids(free, WARM).stream().filter(id -> !rebooted.contains(id)).toList();
      int ready = warm.size() + ids(free, PREPARING).size();
      int deficit = 0;
      if (ready < pool.minWarm()) {
        List<String> standby =
            free.stream()
                .filter(m -> m.state() == STANDBY && onImage(pool, m) && !rebooted.contains(m.id()))
                .map(Member::id)
                .toList();
        int wanted = pool.minWarm() - ready;
        int started = Math.min(wanted, standby.size());
        prepare.addAll(standby.subList(0, started));
        deficit = wanted - started;
      } else if (warm.size() > pool.maxWarm()) {
        for (int i = warm.size() - 1; i >= pool.maxWarm(); i--) {
          park.add(warm.get(i)); // newest first: the oldest stay warm
        }
      }
      deficits.add(
          new Deficit(pool.shape(), pool.minWarm(), deficit, deficit != pool.recordedDeficit()));
    }
    Set<String> preparing = new HashSet<>(prepare);
    Set<String> parked = new HashSet<>(park);
    List<String> off = new ArrayList<>();
    List<String> on = new ArrayList<>();
    for (Member m : snapshot.machines()) {
      if (!m.powerControl()) {
        continue;
      }
      MachineState next =
          preparing.contains(m.id()) ? PREPARING : parked.contains(m.id()) ? STANDBY : m.state();
      if (next == STANDBY && m.free() && !m.switchedOff()) {
        off.add(m.id());
      } else if (NEEDS_POWER.contains(next) && m.switchedOff()) {
        on.add(m.id());
      }
    }
    return new PoolDecisions(prepare, park, deficits, off, on, reboot);
  }

  /**
   * The next machine of the pool to reboot onto its image, if it names one and none is rebooting
   * now.
   */
  private static Optional<Reboot> rollOut(Target pool, List<Member> free) {
    if (pool.image() == null || free.stream().anyMatch(m -> m.state() == REBOOTING)) {
      return Optional.empty();
    }
    return free.stream()
        .filter(
            m ->
                !onImage(pool, m)
                    && !m.switchedOff()
                    && (m.state() == STANDBY || m.state() == WARM))
        .min(Comparator.comparing((Member m) -> m.state() == WARM)) // standby first; stable: oldest
        .map(m -> new Reboot(m.id(), m.state(), pool.image()));
  }

  private static boolean onImage(Target pool, Member m) {
    return pool.image() == null || pool.image().equals(m.image());
  }

  private static List<String> ids(List<Member> machines, MachineState state) {
    return machines.stream().filter(m -> m.state() == state).map(Member::id).toList();
  }
}
