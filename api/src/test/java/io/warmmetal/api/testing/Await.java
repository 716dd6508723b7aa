package io.warmmetal.api.testing;

import java.util.function.BooleanSupplier;

/** Waiting, in tests, for something asynchronous to become true — failing with what was awaited. */
public final class Await {
  private Await() {}

  public static void until(String what, BooleanSupplier condition) throws InterruptedException {
    until(what, condition, 30_000);
  }

  public static void until(String what, BooleanSupplier condition, long timeoutMillis) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMillis;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("timed out waiting until " + what);
      }
      Thread.sleep(25);
    }
  }
}
