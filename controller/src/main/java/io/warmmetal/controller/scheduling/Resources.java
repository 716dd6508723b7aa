package io.warmmetal.controller.scheduling;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Amounts of resources: CPU in millicores, memory in bytes, and extended resources (e.g. {@code
 * nvidia.com/gpu}) in units. Immutable.
 */
public record Resources(long cpuMilli, long memoryBytes, Map<String, Long> extended) {
  public static final Resources NONE = new Resources(0, 0, Map.of());

  public Resources {
    extended = Map.copyOf(extended);
  }

  public static Resources of(long cpuMilli, long memoryBytes) {
    return new Resources(cpuMilli, memoryBytes, Map.of());
  }

  public Resources with(String name, long amount) {
    Map<String, Long> more = new HashMap<>(extended);
    more.merge(name, amount, Long::sum);
    return new Resources(cpuMilli, memoryBytes, more);
  }

  public Resources plus(Resources o) {
    if (o.extended.isEmpty() || extended.isEmpty()) { // no map to merge: most pods and nodes
      return new Resources(
          cpuMilli + o.cpuMilli,
          memoryBytes + o.memoryBytes,
          o.extended.isEmpty() ? extended : o.extended);
    }
    Map<String, Long> sum = new HashMap<>(extended);
    o.extended.forEach((k, v) -> sum.merge(k, v, Long::sum));
    return new Resources(cpuMilli + o.cpuMilli, memoryBytes + o.memoryBytes, sum);
  }

  public Resources minus(Resources o) {
    if (o.extended.isEmpty()) {
      return new Resources(cpuMilli - o.cpuMilli, memoryBytes - o.memoryBytes, extended);
    }
    Map<String, Long> diff = new HashMap<>(extended);
    o.extended.forEach((k, v) -> diff.merge(k, -v, Long::sum));
    return new Resources(cpuMilli - o.cpuMilli, memoryBytes - o.memoryBytes, diff);
  }

  /**
   * These amounts with only the named extended resources: what a limit that names only those
   * counts.
   */
  public Resources onlyExtended(Set<String> names) {
    Map<String, Long> kept = new HashMap<>(extended);
    kept.keySet().retainAll(names);
    return new Resources(cpuMilli, memoryBytes, kept);
  }

  /** The larger of each amount. */
  public Resources max(Resources o) {
    Map<String, Long> most = new HashMap<>(extended);
    o.extended.forEach((k, v) -> most.merge(k, v, Math::max));
    return new Resources(
        Math.max(cpuMilli, o.cpuMilli), Math.max(memoryBytes, o.memoryBytes), most);
  }

  /**
   * Whether {@code need} fits in this, counting only the extended resources this names: what a
   * limit that names only those allows ({@code fits(need.onlyExtended(extended().keySet()))}).
   */
  public boolean fitsCounting(Resources need) {
    if (need.cpuMilli > cpuMilli || need.memoryBytes > memoryBytes) {
      return false;
    }
    for (Map.Entry<String, Long> e : extended.entrySet()) {
      Long needed = need.extended.get(e.getKey());
      if (needed != null && needed > e.getValue()) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code need} and {@code more} together fit in this ({@code fits(need.plus(more))}). */
  public boolean fits(Resources need, Resources more) {
    if (need.cpuMilli + more.cpuMilli > cpuMilli
        || need.memoryBytes + more.memoryBytes > memoryBytes) {
      return false;
    }
    for (Map.Entry<String, Long> e : need.extended.entrySet()) {
      long both = e.getValue() + more.extended.getOrDefault(e.getKey(), 0L);
      if (both > extended.getOrDefault(e.getKey(), 0L)) {
        return false;
      }
    }
    for (Map.Entry<String, Long> e : more.extended.entrySet()) {
      if (!need.extended.containsKey(e.getKey())
          && e.getValue() > extended.getOrDefault(e.getKey(), 0L)) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code need} fits in this. */
  public boolean fits(Resources need) {
    if (need.cpuMilli > cpuMilli || need.memoryBytes > memoryBytes) {
      return false;
    }
    for (Map.Entry<String, Long> e : need.extended.entrySet()) {
      if (e.getValue() > extended.getOrDefault(e.getKey(), 0L)) {
        return false;
      }
    }
    return true;
  }
}
