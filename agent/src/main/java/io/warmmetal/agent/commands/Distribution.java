package io.warmmetal.agent.commands;

import java.time.Duration;
import java.util.Random;

/**
 * A step duration, as Ironic's fake driver draws them: {@code fixed:2s}, {@code uniform:1s:3s} or
 * {@code triangular:1s:2s:6s} (low, mode, high). Units: ms, s, m.
 */
public record Distribution(String kind, long lowMs, long modeMs, long highMs) {

  public static Distribution parse(String spec) {
    String[] p = spec.trim().split(":");
    try {
      return switch (p[0]) {
        case "fixed" -> fixed(ms(p[1]));
        case "uniform" -> new Distribution("uniform", ms(p[1]), ms(p[1]), ms(p[2]));
        case "triangular" -> new Distribution("triangular", ms(p[1]), ms(p[2]), ms(p[3]));
        default -> throw new IllegalArgumentException("unknown distribution '" + p[0] + "'");
      };
    } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
      throw new IllegalArgumentException(
          "cannot read the duration '"
              + spec
              + "' (fixed:2s, uniform:1s:3s or triangular:1s:2s:6s)");
    }
  }

  public static Distribution fixed(long ms) {
    return new Distribution("fixed", ms, ms, ms);
  }

  public long sampleMs(Random random) {
    return switch (kind) {
      case "uniform" -> lowMs + (long) (random.nextDouble() * (highMs - lowMs));
      case "triangular" -> triangular(random.nextDouble());
      default -> lowMs;
    };
  }

  private long triangular(double u) {
    double a = lowMs;
    double b = highMs;
    double c = modeMs;
    if (b <= a) {
      return lowMs;
    }
    double f = (c - a) / (b - a);
    return (long)
        (u < f ? a + Math.sqrt(u * (b - a) * (c - a)) : b - Math.sqrt((1 - u) * (b - a) * (b - c)));
  }

  private static long ms(String s) {
    s = s.trim();
    if (s.endsWith("ms")) {
      return Long.parseLong(s.substring(0, s.length() - 2));
    }
    if (s.endsWith("s")) {
      return Math.round(Double.parseDouble(s.substring(0, s.length() - 1)) * 1000);
    }
    if (s.endsWith("m")) {
      return Math.round(Double.parseDouble(s.substring(0, s.length() - 1)) * 60_000);
    }
    return Duration.parse(s).toMillis();
  }
}
