package io.warmmetal.controller.karpenter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class GoDurationTest {
  @Test
  void readsKubernetesDurations() {
    assertThat(GoDuration.parse("90s", Duration.ZERO)).isEqualTo(Duration.ofSeconds(90));
    assertThat(GoDuration.parse("1h30m", Duration.ZERO)).isEqualTo(Duration.ofMinutes(90));
    assertThat(GoDuration.parse("720h", Duration.ZERO)).isEqualTo(Duration.ofDays(30));
    assertThat(GoDuration.parse("250ms", Duration.ZERO)).isEqualTo(Duration.ofMillis(250));
    assertThat(GoDuration.parse(null, Duration.ofMinutes(15))).isEqualTo(Duration.ofMinutes(15));
    assertThatThrownBy(() -> GoDuration.parse("15 minutes", Duration.ZERO))
        .hasMessageContaining("15 minutes");
  }
}
