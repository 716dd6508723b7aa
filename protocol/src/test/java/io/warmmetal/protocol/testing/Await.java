package io.warmmetal.protocol.testing;

import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waiting, in tests, for something asynchronous to become true — failing with what was awaited. The
 * one way every module's tests wait (the protocol module's test-jar, which the others depend on):
 * checks every 25 ms, never spinning, never a bare sleep.
 */
public final class Await {
  private Await() {}

  public static void until(String what, BooleanSupplier condition) throws InterruptedException {
    until(what, condition, 30_000);
  }

  public static void until(String what, BooleanSupplier condition, long timeoutMillis)
      throws InterruptedException {
    until(what, condition, timeoutMillis, () -> "");
  }

  /** As above; a timeout's message also says {@code why} (logs, events: what was going on). */
  public static void until(
      String what, BooleanSupplier condition, long timeoutMillis, Supplier<String> why)
      throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMillis;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        String context = why.get();
        throw new AssertionError(
            "timed out waiting until " + what + (context.isEmpty() ? "" : "\n" + context));
      }
      Thread.sleep(25);
    }
  }
}
