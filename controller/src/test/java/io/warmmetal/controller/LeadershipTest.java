package io.warmmetal.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** Two controller replicas: one leads at a time, the other takes over when the leader goes. */
@EnableKubernetesMockClient(crud = true)
class LeadershipTest {
  KubernetesClient kube;

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 20_000;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("timed out waiting until " + what);
      }
      Thread.sleep(20);
    }
  }

  @Test
  void oneReplicaLeadsAndAnotherTakesOver() throws Exception {
    Leadership.Timing fast = new Leadership.Timing(Duration.ofSeconds(2), Duration.ofMillis(1500),
        Duration.ofMillis(200));
    AtomicInteger leading = new AtomicInteger();
    AtomicInteger aLed = new AtomicInteger();
    AtomicInteger bLed = new AtomicInteger();
    CompletableFuture<?> a = Leadership.run(kube, "warmmetal-system", "warmmetal-controller", "a", fast,
        () -> {
          leading.incrementAndGet();
          aLed.incrementAndGet();
        }, leading::decrementAndGet);
    await("a leads", () -> aLed.get() == 1);
    CompletableFuture<?> b = Leadership.run(kube, "warmmetal-system", "warmmetal-controller", "b", fast,
        () -> {
          leading.incrementAndGet();
          bLed.incrementAndGet();
        }, leading::decrementAndGet);
    Thread.sleep(2500); // longer than a lease: b still must not lead while a renews
    assertThat(bLed.get()).isZero();
    assertThat(leading.get()).isEqualTo(1);

    a.cancel(true); // a goes away (and releases the lease)
    await("b takes over", () -> bLed.get() == 1);
    assertThat(leading.get()).isEqualTo(1);
    b.cancel(true);
  }
}
