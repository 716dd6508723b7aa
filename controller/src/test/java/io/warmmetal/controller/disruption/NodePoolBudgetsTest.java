package io.warmmetal.controller.disruption;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.controller.karpenter.NodePool;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class NodePoolBudgetsTest {

  private static NodePool pool(NodePool.Budget... budgets) {
    NodePool pool = new NodePool();
    pool.getSpec().disruption = new NodePool.Disruption();
    pool.getSpec().disruption.budgets.addAll(List.of(budgets));
    return pool;
  }

  private static NodePool.Budget budget(
      String nodes, String schedule, String duration, String... reasons) {
    NodePool.Budget b = new NodePool.Budget();
    b.nodes = nodes;
    b.schedule = schedule;
    b.duration = duration;
    b.reasons = reasons.length == 0 ? null : List.of(reasons);
    return b;
  }

  @Test
  void withoutBudgetsTenPercentRoundedUpLessWhatIsAlreadyGoing() {
    Instant now = Instant.parse("2026-11-30T12:00:00Z");
    assertThat(NodePoolBudgets.allowed(pool(), "Empty", 1, 0, now)).isEqualTo(1);
    assertThat(NodePoolBudgets.allowed(pool(), "Empty", 25, 0, now)).isEqualTo(3);
    assertThat(NodePoolBudgets.allowed(pool(), "Empty", 25, 2, now)).isEqualTo(1);
    assertThat(NodePoolBudgets.allowed(pool(), "Empty", 25, 5, now)).isZero();
  }

  @Test
  void theTightestActiveBudgetForTheReasonWins() {
    Instant noon = Instant.parse("2026-11-30T12:00:00Z"); // a Monday
    NodePool pool =
        pool(
            budget("50%", null, null),
            budget("0", null, null, "Underutilized"),
            budget("1", "0 9 * * 1-5", "8h"));
    assertThat(NodePoolBudgets.allowed(pool, "Underutilized", 10, 0, noon)).isZero();
    assertThat(NodePoolBudgets.allowed(pool, "Empty", 10, 0, noon))
        .isEqualTo(1); // business hours: 1 at a time
    assertThat(NodePoolBudgets.allowed(pool, "Empty", 10, 0, Instant.parse("2026-11-30T18:00:00Z")))
        .isEqualTo(5);
    assertThat(
            NodePoolBudgets.allowed(
                pool, "Empty", 10, 0, Instant.parse("2026-11-29T12:00:00Z"))) // Sunday
        .isEqualTo(5);
    // Upstream's docs write weekdays by name.
    NodePool named = pool(budget("50%", null, null), budget("1", "0 9 * * mon-fri", "8h"));
    assertThat(NodePoolBudgets.allowed(named, "Empty", 10, 0, noon)).isEqualTo(1);
    assertThat(
            NodePoolBudgets.allowed(named, "Empty", 10, 0, Instant.parse("2026-11-29T12:00:00Z")))
        .isEqualTo(5);
    // A schedule it cannot read (one the API server's validation let through) stops disruption in
    // that pool rather than being ignored.
    assertThat(NodePoolBudgets.allowed(pool(budget("5", "0 9 * * 7", "1h")), "Empty", 10, 0, noon))
        .isZero();
  }
}
