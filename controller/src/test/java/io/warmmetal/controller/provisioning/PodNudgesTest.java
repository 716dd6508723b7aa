package io.warmmetal.controller.provisioning;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.testing.MovingClock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** When a pending pod is touched for its initialized node, and when it is left alone. */
class PodNudgesTest {
  private final MovingClock clock = new MovingClock(Instant.parse("2026-12-02T12:00:00Z"));
  private final PodNudges nudges = new PodNudges(null, new KarpenterMetrics(), clock);

  @AfterEach
  void close() {
    nudges.close();
  }

  @Test
  void aPodIsTouchedAtOnceForItsNodeThenAtMostOnceASecondUpToThreeTimes() {
    assertThat(nudges.due("pod-a", "wm-1")).isTrue();
    assertThat(nudges.due("pod-a", "wm-1")).as("the same pass, again").isFalse();
    clock.advance(PodNudges.AGAIN_AFTER.minusMillis(1));
    assertThat(nudges.due("pod-a", "wm-1")).as("within a second").isFalse();
    clock.advance(Duration.ofMillis(1));
    assertThat(nudges.due("pod-a", "wm-1")).as("a second later").isTrue();
    clock.advance(PodNudges.AGAIN_AFTER);
    assertThat(nudges.due("pod-a", "wm-1")).as("the third").isTrue();
    clock.advance(Duration.ofMinutes(1));
    assertThat(nudges.due("pod-a", "wm-1")).as("a fourth: the pod has another reason").isFalse();
  }

  @Test
  void anotherNodeOrAnotherPodIsCountedApart() {
    assertThat(nudges.due("pod-a", "wm-1")).isTrue();
    assertThat(nudges.due("pod-b", "wm-1")).isTrue();
    assertThat(nudges.due("pod-a", "wm-2")).as("planned onto another node since").isTrue();
  }

  @Test
  void aPodNoLongerPendingIsForgottenSoItCountsAfreshIfItComesBack() {
    assertThat(nudges.due("pod-a", "wm-1")).isTrue();
    assertThat(nudges.due("pod-b", "wm-1")).isTrue();
    nudges.retain(Set.of("pod-b"));
    assertThat(nudges.due("pod-a", "wm-1")).as("forgotten").isTrue();
    assertThat(nudges.due("pod-b", "wm-1")).as("remembered").isFalse();
  }
}
