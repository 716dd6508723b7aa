package io.warmmetal.controller.karpenter;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Upstream's do-not-disrupt: "true" for good, a duration for that long after the pod started, else
 * nothing.
 */
class DoNotDisruptTest {
  private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

  private static Pod pod(String value, String startedAt) {
    return new PodBuilder()
        .withNewMetadata()
        .withName("p")
        .addToAnnotations("karpenter.sh/do-not-disrupt", value)
        .endMetadata()
        .withNewStatus()
        .withStartTime(startedAt)
        .endStatus()
        .build();
  }

  @Test
  void trueProtectsForGood() {
    assertThat(DoNotDisrupt.active(pod("true", "2020-01-01T00:00:00Z"), NOW)).isTrue();
    assertThat(DoNotDisrupt.marked(pod("true", null))).isTrue();
  }

  @Test
  void aDurationProtectsThatLongAfterThePodStarted() {
    assertThat(DoNotDisrupt.active(pod("30m", "2026-12-01T11:45:00Z"), NOW)).isTrue();
    assertThat(DoNotDisrupt.active(pod("30m", "2026-12-01T11:15:00Z"), NOW)).isFalse();
    assertThat(DoNotDisrupt.active(pod("1h30m", "2026-12-01T10:45:00Z"), NOW)).isTrue();
    assertThat(DoNotDisrupt.active(pod("5m", null), NOW)).isTrue(); // not started: protected
    assertThat(DoNotDisrupt.marked(pod("5m", null))).isFalse(); // only "true" marks a node or claim
  }

  @Test
  void anythingElseIsAsIfTheAnnotationWereNotThere() {
    assertThat(DoNotDisrupt.active(pod("false", "2026-12-01T11:59:00Z"), NOW)).isFalse();
    assertThat(DoNotDisrupt.active(pod("forever", "2026-12-01T11:59:00Z"), NOW)).isFalse();
    assertThat(
            DoNotDisrupt.active(
                new PodBuilder().withNewMetadata().withName("p").endMetadata().build(), NOW))
        .isFalse();
  }
}
