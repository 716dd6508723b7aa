package io.warmmetal.controller.karpenter;

import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A standard five-field cron schedule (minute hour day-of-month month day-of-week), parsed as
 * Karpenter parses a disruption budget's: robfig/cron's {@code ParseStandard} — {@code *} and
 * {@code ?}, lists, ranges, steps ({@code N/step} runs from N to the field's end), month and
 * weekday names ({@code jan}–{@code dec}, {@code sun}–{@code sat}, any case), weekdays 0–6, and the
 * {@code @daily}-style descriptors. When both day fields are restricted either may match; when one
 * is a bare star (or {@code ?}) both must. Times are UTC, as Karpenter's.
 */
public final class Cron {
  private static final Map<String, String> DESCRIPTORS =
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

  private static final List<String> MONTHS =
      List.of("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec");
  private static final List<String> WEEKDAYS =
      List.of("sun", "mon", "tue", "wed", "thu", "fri", "sat");

  /** A field's bounds and names (the first name is worth {@code min}). */
  private record Bounds(String name, int min, int max, List<String> names) {}

  private static final Bounds MINUTE = new Bounds("minute", 0, 59, List.of());
  private static final Bounds HOUR = new Bounds("hour", 0, 23, List.of());
  private static final Bounds DAY_OF_MONTH = new Bounds("day of month", 1, 31, List.of());
  private static final Bounds MONTH = new Bounds("month", 1, 12, MONTHS);
  private static final Bounds DAY_OF_WEEK = new Bounds("day of week", 0, 6, WEEKDAYS);

  /** Set on a field written as a bare star: robfig's starBit, which decides how days combine. */
  private static final long STAR = 1L << 63;

  private final long minutes;
  private final long hours;
  private final long days;
  private final long months;
  private final long weekdays;

  private Cron(String[] f) {
    minutes = field(f[0], MINUTE);
    hours = field(f[1], HOUR);
    days = field(f[2], DAY_OF_MONTH);
    months = field(f[3], MONTH);
    weekdays = field(f[4], DAY_OF_WEEK);
  }

  public static Cron parse(String text) {
    String trimmed = text.trim();
    if (trimmed.startsWith("@")) {
      String fields = DESCRIPTORS.get(trimmed.toLowerCase(Locale.ROOT));
      if (fields == null) {
        throw new IllegalArgumentException(
            "unrecognized descriptor: '"
                + trimmed
                + "' (@yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)");
      }
      trimmed = fields;
    }
    String[] fields = trimmed.split("\\s+");
    if (fields.length != 5) {
      throw new IllegalArgumentException(
          "expected exactly 5 fields (minute hour day-of-month month day-of-week), found "
              + (trimmed.isEmpty() ? 0 : fields.length)
              + ": '"
              + text
              + "'");
    }
    return new Cron(fields);
  }

  boolean matches(ZonedDateTime t) {
    return bit(minutes, t.getMinute())
        && bit(hours, t.getHour())
        && bit(months, t.getMonthValue())
        && dayMatches(t);
  }

  private boolean dayMatches(ZonedDateTime t) {
    boolean day = bit(days, t.getDayOfMonth());
    boolean weekday = bit(weekdays, t.getDayOfWeek().getValue() % 7);
    return (days & STAR) != 0 || (weekdays & STAR) != 0 ? day && weekday : day || weekday;
  }

  private static boolean bit(long field, int value) {
    return (field & (1L << value)) != 0;
  }

  /**
   * Whether the schedule fired within {@code window} before {@code now} — after {@code now -
   * window}, at or before {@code now} — as upstream's budget is active when the schedule's next
   * firing after that point is not after now.
   */
  public boolean activeAt(ZonedDateTime now, Duration window) {
    ZonedDateTime since = now.minus(window);
    for (ZonedDateTime t = now.truncatedTo(ChronoUnit.MINUTES);
        t.isAfter(since);
        t = t.minusMinutes(1)) {
      if (matches(t)) {
        return true;
      }
    }
    return false;
  }

  private static long field(String text, Bounds bounds) {
    long bits = 0;
    for (String part : text.split(",", -1)) {
      bits |= range(part, bounds);
    }
    return bits;
  }

  /** One comma-separated part, as robfig's getRange reads it. */
  private static long range(String expr, Bounds bounds) {
    String[] rangeAndStep = expr.split("/", -1);
    String[] lowAndHigh = rangeAndStep[0].split("-", -1);
    boolean single = lowAndHigh.length == 1;
    int start;
    int end;
    long extra = 0;
    if (lowAndHigh[0].equals("*") || lowAndHigh[0].equals("?")) {
      start = bounds.min();
      end = bounds.max();
      extra = STAR;
    } else {
      start = value(lowAndHigh[0], expr, bounds);
      if (lowAndHigh.length == 1) {
        end = start;
      } else if (lowAndHigh.length == 2) {
        end = value(lowAndHigh[1], expr, bounds);
      } else {
        throw problem(bounds, "too many hyphens: " + expr);
      }
    }
    int step = 1;
    if (rangeAndStep.length == 2) {
      step = number(rangeAndStep[1], expr, bounds);
      if (single) {
        end = bounds.max(); // N/step: from N to the end
      }
      if (step > 1) {
        extra = 0;
      }
    } else if (rangeAndStep.length > 2) {
      throw problem(bounds, "too many slashes: " + expr);
    }
    if (start < bounds.min()) {
      throw problem(
          bounds, "beginning of range (" + start + ") below minimum (" + bounds.min() + ")");
    }
    if (end > bounds.max()) {
      throw problem(bounds, "end of range (" + end + ") above maximum (" + bounds.max() + ")");
    }
    if (start > end) {
      throw problem(bounds, "beginning of range (" + start + ") beyond end of range (" + end + ")");
    }
    if (step == 0) {
      throw problem(bounds, "step of range should be a positive number: " + expr);
    }
    long bits = 0;
    for (int v = start; v <= end; v += step) {
      bits |= 1L << v;
    }
    return bits | extra;
  }

  private static int value(String text, String expr, Bounds bounds) {
    int named = bounds.names().indexOf(text.toLowerCase(Locale.ROOT));
    return named >= 0 ? bounds.min() + named : number(text, expr, bounds);
  }

  private static int number(String text, String expr, Bounds bounds) {
    if (!text.matches("[0-9]{1,9}")) {
      throw problem(
          bounds,
          "'"
              + text
              + "' in '"
              + expr
              + "' is not a "
              + (text.startsWith("-") ? "non-negative number" : "number")
              + (bounds.names().isEmpty() ? "" : " or a name (" + String.join(", ", bounds.names()))
              + (bounds.names().isEmpty() ? "" : ")"));
    }
    return Integer.parseInt(text);
  }

  private static IllegalArgumentException problem(Bounds bounds, String what) {
    return new IllegalArgumentException(
        bounds.name() + " field: " + what + " (" + bounds.min() + "-" + bounds.max() + ")");
  }
}
