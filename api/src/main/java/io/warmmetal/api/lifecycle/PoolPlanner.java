package io.warmmetal.api.lifecycle;

import static io.warmmetal.api.lifecycle.MachineState.IN_USE;
import static io.warmmetal.api.lifecycle.MachineState.JOINING;
import static io.warmmetal.api.lifecycle.MachineState.PREPARING;
import static io.warmmetal.api.lifecycle.MachineState.RESETTING;
import static io.warmmetal.api.lifecycle.MachineState.STANDBY;
import static io.warmmetal.api.lifecycle.MachineState.WARM;

import io.warmmetal.api.lifecycle.PoolDecisions.Deficit;
import io.warmmetal.api.lifecycle.PoolSnapshot.Member;
import io.warmmetal.api.lifecycle.PoolSnapshot.Target;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The one owner of the pools' decisions, a pure function of a {@link PoolSnapshot}: per pool,
 * <ul>
 *   <li>warm + preparing below {@code minWarm}: the oldest standby machines are prepared; what standby cannot cover
 *       is the pool's deficit;</li>
 *   <li>warm above {@code maxWarm}: the newest warm machines are parked in standby;</li>
 * </ul>
 * then, over the states those moves lead to, the standby tier's power: idle standby machines off, machines needed
 * again (preparing, warm or claimed) on. Only free machines (uncordoned, no instance) count or move.
 */
public final class PoolPlanner {
  /** States in which a machine must be running. */
  private static final Set<MachineState> NEEDS_POWER = EnumSet.of(PREPARING, WARM, JOINING, IN_USE, RESETTING);

  private PoolPlanner() {}

  public static PoolDecisions decide(PoolSnapshot snapshot) {
    List<String> prepare = new ArrayList<>();
    List<String> park = new ArrayList<>();
    List<Deficit> deficits = new ArrayList<>();
    for (Target pool : snapshot.pools()) {
      List<Member> free = snapshot.machines().stream()
          .filter(m -> m.free() && m.shape().equals(pool.shape())).toList();
      List<String> warm = ids(free, WARM);
      int ready = warm.size() + ids(free, PREPARING).size();
      int deficit = 0;
      if (ready < pool.minWarm()) {
        List<String> standby = ids(free, STANDBY);
        int wanted = pool.minWarm() - ready;
        int started = Math.min(wanted, standby.size());
        prepare.addAll(standby.subList(0, started));
        deficit = wanted - started;
      } else if (warm.size() > pool.maxWarm()) {
        for (int i = warm.size() - 1; i >= pool.maxWarm(); i--) {
          park.add(warm.get(i)); // newest first: the oldest stay warm
        }
      }
      deficits.add(new Deficit(pool.shape(), pool.minWarm(), deficit, deficit != pool.recordedDeficit()));
    }
    Set<String> preparing = new HashSet<>(prepare);
    Set<String> parked = new HashSet<>(park);
    List<String> off = new ArrayList<>();
    List<String> on = new ArrayList<>();
    for (Member m : snapshot.machines()) {
      if (!m.powerControl()) {
        continue;
      }
      MachineState next = preparing.contains(m.id()) ? PREPARING : parked.contains(m.id()) ? STANDBY : m.state();
      if (next == STANDBY && m.free() && !m.switchedOff()) {
        off.add(m.id());
      } else if (NEEDS_POWER.contains(next) && m.switchedOff()) {
        on.add(m.id());
      }
    }
    return new PoolDecisions(prepare, park, deficits, off, on);
  }

  private static List<String> ids(List<Member> machines, MachineState state) {
    return machines.stream().filter(m -> m.state() == state).map(Member::id).toList();
  }
}
