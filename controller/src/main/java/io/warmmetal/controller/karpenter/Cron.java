package io.warmmetal.controller.karpenter;

import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.BitSet;
import java.util.Map;

/**
 * A standard five-field cron schedule (minute hour day-of-month month day-of-week; {@code *},
 * lists, ranges, steps, and the {@code @daily}-style macros), as Karpenter's disruption budgets use
 * it. Times are UTC, as Karpenter's.
 */
public final class Cron {
  private static final Map<String, String> MACROS =
      Map.of(
          "@yearly",
          "0 0 1 1 *",
          "@annually",
          "0 0 1 1 *",
          "@monthly",
          "0 0 1 * *",
          "@weekly",
          "0 0 * * 0",
          "@daily",
          "0 0 * * *",
          "@midnight",
          "0 0 * * *",
          "@hourly",
          "0 * * * *");

  private final BitSet minutes;
  private final BitSet hours;
  private final BitSet days;
  private final BitSet months;
  private final BitSet weekdays;
  private final boolean anyDay;
  private final boolean anyWeekday;

  private Cron(String[] f) {
    minutes = field(f[0], 0, 59);
    hours = field(f[1], 0, 23);
    days = field(f[2], 1, 31);
    months = field(f[3], 1, 12);
    weekdays = field(f[4], 0, 7);
    if (weekdays.get(7)) {
      weekdays.set(0); // 7 is Sunday too
    }
    anyDay = f[2].equals("*");
    anyWeekday = f[4].equals("*");
  }

  public static Cron parse(String text) {
    String expanded = MACROS.getOrDefault(text.trim(), text.trim());
    String[] fields = expanded.split("\\s+");
    if (fields.length != 5) {
      throw new IllegalArgumentException(
          "not a cron schedule: '" + text + "' (five fields, or @daily etc.)");
    }
    return new Cron(fields);
  }

  boolean matches(ZonedDateTime t) {
    boolean day = days.get(t.getDayOfMonth());
    boolean weekday = weekdays.get(t.getDayOfWeek().getValue() % 7);
    // As in cron: when both day fields are restricted, either may match.
    boolean dayOk =
        anyDay && anyWeekday ? true : anyDay ? weekday : anyWeekday ? day : day || weekday;
    return minutes.get(t.getMinute())
        && hours.get(t.getHour())
        && months.get(t.getMonthValue())
        && dayOk;
  }

  /**
   * Whether a firing within the last {@code windowMinutes} (inclusive of now) opened a window still
   * open now.
   */
  public boolean activeAt(ZonedDateTime now, long windowMinutes) {
    ZonedDateTime t = now.truncatedTo(ChronoUnit.MINUTES);
    for (long i = 0; i < windowMinutes; i++, t = t.minusMinutes(1)) {
      if (matches(t)) {
        return true;
      }
    }
    return false;
  }

  private static BitSet field(String text, int min, int max) {
    BitSet bits = new BitSet();
    for (String part : text.split(",")) {
      int step = 1;
      String range = part;
      int slash = part.indexOf('/');
      if (slash >= 0) {
        step = Integer.parseInt(part.substring(slash + 1));
        range = part.substring(0, slash);
      }
      int from;
      int to;
      if (range.equals("*")) {
        from = min;
        to = max;
      } else if (range.contains("-")) {
        from = Integer.parseInt(range.substring(0, range.indexOf('-')));
        to = Integer.parseInt(range.substring(range.indexOf('-') + 1));
      } else {
        from = Integer.parseInt(range);
        to = slash >= 0 ? max : from;
      }
      if (from < min || to > max || from > to || step < 1) {
        throw new IllegalArgumentException(
            "cron field '" + text + "' is outside " + min + "-" + max);
      }
      for (int v = from; v <= to; v += step) {
        bits.set(v);
      }
    }
    return bits;
  }
}
