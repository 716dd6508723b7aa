package io.warmmetal.controller.termination;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.WellKnown;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * When a Node's pods go whatever their budgets, as upstream's node termination reads it: the
 * claim's termination-timestamp annotation (node repair's "now"), else its deletion plus its
 * terminationGracePeriod.
 */
class TerminationDeadlineTest {
  private final NodeClaim claim = new NodeClaim();

  TerminationDeadlineTest() {
    claim.getMetadata().setName("default-a");
    claim.getMetadata().setDeletionTimestamp("2026-12-02T12:00:00Z");
  }

  @Test
  void withoutATerminationGracePeriodOrAnnotationThereIsNone() {
    assertThat(Termination.deadline(claim)).isNull();
  }

  @Test
  void theDeletionPlusTheTerminationGracePeriod() {
    claim.getSpec().terminationGracePeriod = "1h";
    assertThat(Termination.deadline(claim)).isEqualTo(Instant.parse("2026-12-02T13:00:00Z"));
  }

  @Test
  void theAnnotationWinsOverTheTerminationGracePeriod() {
    claim.getSpec().terminationGracePeriod = "1h";
    claim
        .getMetadata()
        .setAnnotations(
            Map.of(WellKnown.TERMINATION_TIMESTAMP_ANNOTATION, "2026-12-02T12:30:00+02:00"));
    assertThat(Termination.deadline(claim)).isEqualTo(Instant.parse("2026-12-02T10:30:00Z"));
  }
}
