package io.warmmetal.controller.karpenter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.ZonedDateTime;
import org.junit.jupiter.api.Test;

class CronTest {
  @Test
  void cronSchedulesMatchAsCronDoes() {
    Cron weekdayMornings = Cron.parse("*/15 9-11 * * mon-fri".replace("mon-fri", "1-5"));
    assertThat(weekdayMornings.matches(ZonedDateTime.parse("2026-11-30T09:45:00Z"))).isTrue();
    assertThat(weekdayMornings.matches(ZonedDateTime.parse("2026-11-30T09:44:00Z"))).isFalse();
    assertThat(weekdayMornings.matches(ZonedDateTime.parse("2026-11-29T09:45:00Z")))
        .isFalse(); // Sunday
    assertThat(Cron.parse("@daily").activeAt(ZonedDateTime.parse("2026-11-30T00:59:00Z"), 60))
        .isTrue();
    assertThat(Cron.parse("@daily").activeAt(ZonedDateTime.parse("2026-11-30T01:00:00Z"), 60))
        .isFalse();
    assertThat(Cron.parse("0 0 * * 7").matches(ZonedDateTime.parse("2026-11-29T00:00:00Z")))
        .isTrue(); // Sunday
    assertThat(Cron.parse("0 0 * * 1-7").matches(ZonedDateTime.parse("2026-11-29T00:00:00Z")))
        .isTrue();
    assertThatThrownBy(() -> Cron.parse("61 * * * *")).hasMessageContaining("0-59");
    assertThatThrownBy(() -> Cron.parse("* * *")).hasMessageContaining("five fields");
  }
}
