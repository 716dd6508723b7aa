package io.warmmetal.controller.disruption;

import io.warmmetal.controller.karpenter.Cron;
import io.warmmetal.controller.karpenter.GoDuration;
import io.warmmetal.controller.karpenter.NodePool;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * A NodePool's disruption budgets, as Karpenter reads them: each budget caps the nodes being
 * disrupted at once (a count, or a percentage of the pool's nodes rounded up), for the reasons it
 * names (all if none), while its cron {@code schedule} window of {@code duration} is open (always
 * if none). The tightest active budget wins; a pool without budgets gets Karpenter's default of
 * 10%.
 */
final class NodePoolBudgets {
  static final List<String> REASONS = List.of("Empty", "Underutilized", "Drifted");
  private static final NodePool.Budget DEFAULT = new NodePool.Budget();

  static {
    DEFAULT.nodes = "10%";
  }

  private NodePoolBudgets() {}

  /** How many more of the pool's {@code nodes} may be disrupted for {@code reason} now. */
  static int allowed(NodePool pool, String reason, int nodes, int disrupting, Instant now) {
    List<NodePool.Budget> budgets =
        pool.getSpec().disruption == null
                || pool.getSpec().disruption.budgets == null
                || pool.getSpec().disruption.budgets.isEmpty()
            ? List.of(DEFAULT)
            : pool.getSpec().disruption.budgets;
    int cap = Integer.MAX_VALUE;
    for (NodePool.Budget b : budgets) {
      if (b.reasons != null && !b.reasons.isEmpty() && !b.reasons.contains(reason)) {
        continue;
      }
      try {
        if (b.schedule != null
            && !Cron.parse(b.schedule)
                .activeAt(
                    now.atZone(ZoneOffset.UTC),
                    GoDuration.parse(b.duration, Duration.ZERO).toMinutes())) {
          continue;
        }
      } catch (IllegalArgumentException e) {
        // A budget we cannot read blocks disruption of its pool rather than being ignored (safe
        // side).
        LoggerFactory.getLogger(NodePoolBudgets.class)
            .warn(
                "NodePool {}: budget schedule '{}': {}",
                pool.getMetadata().getName(),
                b.schedule,
                e.getMessage());
        return 0;
      }
      cap = Math.min(cap, value(b.nodes == null ? "10%" : b.nodes, nodes));
    }
    return cap == Integer.MAX_VALUE ? Integer.MAX_VALUE : Math.max(0, cap - disrupting);
  }

  private static int value(String nodes, int total) {
    String s = nodes.trim();
    if (s.endsWith("%")) {
      return (int) Math.ceil(Integer.parseInt(s.substring(0, s.length() - 1)) * total / 100.0);
    }
    return Integer.parseInt(s);
  }
}
