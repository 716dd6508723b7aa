package io.warmmetal.controller.karpenter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Schedules as Karpenter reads a budget's (robfig/cron's {@code ParseStandard}): the activation
 * cases of robfig/cron's {@code spec_test.go} (its five-field ones) and its parser's errors, and
 * upstream's budget window.
 */
class CronTest {
  private static final DateTimeFormatter CRON_TEST_TIME =
      DateTimeFormatter.ofPattern("EEE MMM d HH:mm yyyy", Locale.ROOT);

  private static ZonedDateTime at(String text) {
    return LocalDateTime.parse(text, CRON_TEST_TIME).atZone(ZoneOffset.UTC);
  }

  @ParameterizedTest(name = "{1} at {0}: {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        // Every fifteen minutes.
        "Mon Jul 9 15:00 2012 | 0/15 * * * * | true",
        "Mon Jul 9 15:45 2012 | 0/15 * * * * | true",
        "Mon Jul 9 15:40 2012 | 0/15 * * * * | false",
        // Every fifteen minutes, starting at 5 minutes.
        "Mon Jul 9 15:05 2012 | 5/15 * * * * | true",
        "Mon Jul 9 15:20 2012 | 5/15 * * * * | true",
        "Mon Jul 9 15:50 2012 | 5/15 * * * * | true",
        // Named months.
        "Sun Jul 15 15:00 2012 | 0/15 * * Jul * | true",
        "Sun Jul 15 15:00 2012 | 0/15 * * Jun * | false",
        // Everything set.
        "Sun Jul 15 08:30 2012 | 30 08 ? Jul Sun | true",
        "Sun Jul 15 08:30 2012 | 30 08 15 Jul ? | true",
        "Mon Jul 16 08:30 2012 | 30 08 ? Jul Sun | false",
        "Mon Jul 16 08:30 2012 | 30 08 15 Jul ? | false",
        // Predefined schedules.
        "Mon Jul 9 15:00 2012 | @hourly | true",
        "Mon Jul 9 15:04 2012 | @hourly | false",
        "Mon Jul 9 15:00 2012 | @daily | false",
        "Mon Jul 9 00:00 2012 | @daily | true",
        "Mon Jul 9 00:00 2012 | @weekly | false",
        "Sun Jul 8 00:00 2012 | @weekly | true",
        "Sun Jul 8 01:00 2012 | @weekly | false",
        "Sun Jul 8 00:00 2012 | @monthly | false",
        "Sun Jul 1 00:00 2012 | @monthly | true",
        // If both day fields are restricted, only one needs to match.
        "Sun Jul 15 00:00 2012 | * * 1,15 * Sun | true",
        "Fri Jun 15 00:00 2012 | * * 1,15 * Sun | true",
        "Wed Aug 1 00:00 2012 | * * 1,15 * Sun | true",
        "Sun Jul 15 00:00 2012 | * * */10 * Sun | true",
        // If one has a star, both need to.
        "Sun Jul 15 00:00 2012 | * * * * Mon | false",
        "Mon Jul 9 00:00 2012 | * * 1,15 * * | false",
        "Sun Jul 15 00:00 2012 | * * 1,15 * * | true",
        "Sun Jul 15 00:00 2012 | * * */2 * Sun | true",
        // Upstream's docs: weekday names and ranges of them, any case.
        "Mon Nov 30 09:00 2026 | 0 9 * * mon-fri | true",
        "Fri Dec 4 09:00 2026 | 0 9 * * MON-FRI | true",
        "Sun Nov 29 09:00 2026 | 0 9 * * mon-fri | false",
        "Sat Dec 5 09:00 2026 | 0 9 * * sat,sun | true",
        "Mon Nov 30 09:45 2026 | */15 9-11 * * 1-5 | true",
        "Mon Nov 30 09:44 2026 | */15 9-11 * * 1-5 | false",
        "Tue Dec 1 00:00 2026 | 0 0 1 jan-dec/2 * | false",
        "Tue Dec 1 00:00 2026 | 0 0 1 feb-dec/2 * | true",
      })
  void firesAsRobfigCronDoes(String time, String schedule, boolean fires) {
    assertThat(Cron.parse(schedule).matches(at(time))).isEqualTo(fires);
  }

  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "5-4 * * * * | beginning of range (5) beyond end of range (4)",
        "*/-12 * * * * | not a non-negative number",
        "*//2 * * * * | too many slashes",
        "1-2-3 * * * * | too many hyphens",
        "60 * * * * | end of range (60) above maximum (59)",
        "* * 0 * * | beginning of range (0) below minimum (1)",
        "*/0 * * * * | step of range should be a positive number",
        "* * * * 7 | end of range (7) above maximum (6)",
        "* * * foo * | 'foo' in 'foo' is not a number or a name (jan, feb",
        "* * * * | expected exactly 5 fields",
        "0 0 0 * * * | expected exactly 5 fields",
        "@every 1h | unrecognized descriptor",
      })
  void refusesWhatRobfigCronRefuses(String schedule, String problem) {
    assertThatThrownBy(() -> Cron.parse(schedule)).hasMessageContaining(problem);
  }

  @ParameterizedTest(name = "@daily for {1} at {0}: {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "2026-11-30T00:00:00Z | PT1H | true",
        "2026-11-30T00:59:59Z | PT1H | true",
        "2026-11-30T01:00:00Z | PT1H | false",
        "2026-11-29T23:59:00Z | PT1H | false",
        "2026-11-30T07:59:00Z | PT8H | true",
        "2026-11-30T00:00:00Z | PT0S | false",
      })
  void aBudgetIsActiveForItsDurationAfterItsScheduleFires(
      String now, String duration, boolean active) {
    assertThat(Cron.parse("@daily").activeAt(ZonedDateTime.parse(now), Duration.parse(duration)))
        .isEqualTo(active);
  }
}
