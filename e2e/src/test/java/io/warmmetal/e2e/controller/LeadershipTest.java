package io.warmmetal.e2e.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.Controller;
import io.warmmetal.controller.Leadership;
import io.warmmetal.e2e.Installation;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.RealCluster;
import io.warmmetal.protocol.testing.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two controller replicas on a real API server, each as the controller's ServiceAccount (the
 * shipped Role's lease rights): one leads at a time, the other takes over when the leader goes.
 */
@ExtendWith(RealCluster.class)
@Tag("cluster")
class LeadershipTest {

  @Test
  void oneReplicaLeadsAndAnotherTakesOver(ControlPlane cluster) throws Exception {
    try (Installation wm =
        Installation.install(cluster, "http://127.0.0.1:1", "unused", pool -> {})) {
      String token = wm.controllerToken();
      KubernetesClient replicaA = cluster.clientWithToken(token, Controller.USER_AGENT);
      KubernetesClient replicaB = cluster.clientWithToken(token, Controller.USER_AGENT);
      // Short enough for a quick test, long enough that a loaded machine renews in time.
      Duration leaseDuration = Duration.ofSeconds(4);
      Leadership.Timing fast =
          new Leadership.Timing(leaseDuration, Duration.ofSeconds(3), Duration.ofMillis(200));
      AtomicInteger leading = new AtomicInteger();
      AtomicInteger aLed = new AtomicInteger();
      AtomicInteger bLed = new AtomicInteger();
      CompletableFuture<?> a =
          Leadership.run(
              replicaA,
              Installation.NAMESPACE,
              "warmmetal-controller",
              "a",
              fast,
              () -> {
                leading.incrementAndGet();
                aLed.incrementAndGet();
              },
              leading::decrementAndGet);
      Await.until("a leads", () -> aLed.get() == 1, 60_000);
      CompletableFuture<?> b =
          Leadership.run(
              replicaB,
              Installation.NAMESPACE,
              "warmmetal-controller",
              "b",
              fast,
              () -> {
                leading.incrementAndGet();
                bLed.incrementAndGet();
              },
              leading::decrementAndGet);
      // Longer than a lease: b still must not lead while a renews. Counted in a's renewals: three
      // of them later than
      // a lease after b began to compete (b tries every 200 ms).
      Instant bCompetes = Instant.now();
      Set<Instant> renewals = new HashSet<>();
      Await.until(
          "three of a's renewals a lease after b competes",
          () -> {
            Lease held =
                cluster
                    .admin()
                    .leases()
                    .inNamespace(Installation.NAMESPACE)
                    .withName("warmmetal-controller")
                    .get();
            Instant renewed = held.getSpec().getRenewTime().toInstant();
            if ("a".equals(held.getSpec().getHolderIdentity())
                && renewed.isAfter(bCompetes.plus(leaseDuration))) {
              renewals.add(renewed);
            }
            return renewals.size() >= 3 || bLed.get() > 0;
          },
          60_000);
      assertThat(bLed.get()).isZero();
      assertThat(leading.get()).isEqualTo(1);
      Lease lease =
          cluster
              .admin()
              .leases()
              .inNamespace(Installation.NAMESPACE)
              .withName("warmmetal-controller")
              .get();
      assertThat(lease.getSpec().getHolderIdentity()).isEqualTo("a");

      a.cancel(true); // a goes away (and releases the lease)
      Await.until("b takes over", () -> bLed.get() == 1, 60_000);
      assertThat(leading.get()).isEqualTo(1);
      b.cancel(true);
    }
  }
}
