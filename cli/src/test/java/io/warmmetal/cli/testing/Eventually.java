package io.warmmetal.cli.testing;

import java.util.function.BooleanSupplier;

/** Waits for a condition (at most 20 s), for output a CLI thread is still producing. */
public final class Eventually {
  private Eventually() {}

  public static void until(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
  }
}
