package io.warmmetal.controller.nodeoverlay;

import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Requirements as sets of label values, one per key, as upstream's {@code scheduling.Requirements}:
 * requirements on one key intersect; two sets are compatible when each key of the other is defined
 * here (or allowed undefined, or the other only excludes) and, for the keys both define, the values
 * overlap. What decides which instance types and offerings a NodeOverlay applies to.
 */
final class LabelRequirements {
  private final Map<String, Values> byKey = new HashMap<>();

  /**
   * The values one key may take: {@code values}, or (a complement) any but {@code values}; an
   * integer within the bounds when there are bounds (Gt N is Gte N+1, Lt N is Lte N-1).
   */
  record Values(boolean complement, Set<String> values, Long gte, Long lte) {
    static Values of(Requirement r) {
      List<String> given = r.getValues() == null ? List.of() : r.getValues();
      return switch (r.getOperator()) {
        case "In" -> new Values(false, Set.copyOf(given), null, null);
        case "NotIn" -> new Values(true, Set.copyOf(given), null, null);
        case "DoesNotExist" -> new Values(false, Set.of(), null, null);
        case "Gt" -> new Values(true, Set.of(), Long.parseLong(given.get(0)) + 1, null);
        case "Gte" -> new Values(true, Set.of(), Long.parseLong(given.get(0)), null);
        case "Lt" -> new Values(true, Set.of(), null, Long.parseLong(given.get(0)) - 1);
        case "Lte" -> new Values(true, Set.of(), null, Long.parseLong(given.get(0)));
        default -> new Values(true, Set.of(), null, null); // Exists
      };
    }

    /** Whether it excludes rather than admits: upstream's NotIn or DoesNotExist operator. */
    boolean excludes() {
      return complement ? !values.isEmpty() : values.isEmpty();
    }

    Values intersection(Values o) {
      Long low = max(gte, o.gte);
      Long high = min(lte, o.lte);
      if (low != null && high != null && low > high) {
        return new Values(false, Set.of(), null, null);
      }
      Set<String> both = new HashSet<>();
      if (complement && o.complement) {
        both.addAll(values);
        both.addAll(o.values);
      } else if (complement) {
        o.values.stream().filter(v -> !values.contains(v)).forEach(both::add);
      } else if (o.complement) {
        values.stream().filter(v -> !o.values.contains(v)).forEach(both::add);
      } else {
        values.stream().filter(o.values::contains).forEach(both::add);
      }
      both.removeIf(v -> !within(v, low, high));
      boolean complementBoth = complement && o.complement;
      return complementBoth
          ? new Values(true, Set.copyOf(both), low, high)
          : new Values(false, Set.copyOf(both), null, null);
    }

    boolean overlaps(Values o) {
      Long low = max(gte, o.gte);
      Long high = min(lte, o.lte);
      if (low != null && high != null && low > high) {
        return false;
      }
      if (complement && o.complement) {
        return true;
      }
      if (complement) {
        return o.values.stream().anyMatch(v -> !values.contains(v) && within(v, low, high));
      }
      if (o.complement) {
        return values.stream().anyMatch(v -> !o.values.contains(v) && within(v, low, high));
      }
      return values.stream().anyMatch(v -> o.values.contains(v) && within(v, low, high));
    }

    private static boolean within(String value, Long low, Long high) {
      if (low == null && high == null) {
        return true;
      }
      long v;
      try {
        v = Long.parseLong(value);
      } catch (NumberFormatException notAnInteger) {
        return false;
      }
      return (low == null || v >= low) && (high == null || v <= high);
    }

    private static Long max(Long a, Long b) {
      return a == null ? b : b == null ? a : Long.valueOf(Math.max(a, b));
    }

    private static Long min(Long a, Long b) {
      return a == null ? b : b == null ? a : Long.valueOf(Math.min(a, b));
    }
  }

  static LabelRequirements of(List<Requirement> requirements) {
    LabelRequirements all = new LabelRequirements();
    requirements.forEach(
        r -> all.add(WellKnown.NORMALIZED.getOrDefault(r.getKey(), r.getKey()), Values.of(r)));
    return all;
  }

  /** Each label as a requirement {@code In} its value. */
  LabelRequirements addLabels(Map<String, String> labels) {
    labels.forEach((key, value) -> add(key, new Values(false, Set.of(value), null, null)));
    return this;
  }

  /** A requirement {@code In} these values (none: nothing added). */
  LabelRequirements addIn(String key, Set<String> values) {
    if (!values.isEmpty()) {
      add(key, new Values(false, Set.copyOf(values), null, null));
    }
    return this;
  }

  private void add(String key, Values values) {
    byKey.merge(key, values, Values::intersection);
  }

  /**
   * Whether {@code other} can loosely be met here (upstream's {@code Compatible}): each of its keys
   * is defined here, allowed undefined, or only excluded by it; and the keys both define overlap.
   */
  boolean compatible(LabelRequirements other, Set<String> allowUndefined) {
    for (var entry : other.byKey.entrySet()) {
      if (!allowUndefined.contains(entry.getKey())
          && !byKey.containsKey(entry.getKey())
          && !entry.getValue().excludes()) {
        return false;
      }
    }
    return intersects(other);
  }

  /** Upstream's {@code Intersects}: for each key both define, values in common. */
  private boolean intersects(LabelRequirements other) {
    for (var entry : byKey.entrySet()) {
      Values incoming = other.byKey.get(entry.getKey());
      if (incoming == null) {
        continue;
      }
      Values existing = entry.getValue();
      if (!existing.overlaps(incoming) && !(incoming.excludes() && existing.excludes())) {
        return false;
      }
    }
    return true;
  }
}
