package io.warmmetal.e2e.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.api.testing.Await;
import io.warmmetal.controller.Controller;
import io.warmmetal.controller.Leadership;
import io.warmmetal.e2e.Installation;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.RealCluster;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two controller replicas on a real API server, each as the controller's ServiceAccount (the shipped Role's lease
 * rights): one leads at a time, the other takes over when the leader goes.
 */
@ExtendWith(RealCluster.class)
class LeadershipTest {

  @Test
  void oneReplicaLeadsAndAnotherTakesOver(ControlPlane cluster) throws Exception {
    try (Installation wm = Installation.install(cluster, "http://127.0.0.1:1", "unused", pool -> {})) {
      String token = wm.controllerToken();
      KubernetesClient replicaA = cluster.clientWithToken(token, Controller.USER_AGENT);
      KubernetesClient replicaB = cluster.clientWithToken(token, Controller.USER_AGENT);
      Leadership.Timing fast = new Leadership.Timing(Duration.ofSeconds(2), Duration.ofMillis(1500),
          Duration.ofMillis(200));
      AtomicInteger leading = new AtomicInteger();
      AtomicInteger aLed = new AtomicInteger();
      AtomicInteger bLed = new AtomicInteger();
      CompletableFuture<?> a = Leadership.run(replicaA, Installation.NAMESPACE, "warmmetal-controller", "a", fast,
          () -> {
            leading.incrementAndGet();
            aLed.incrementAndGet();
          }, leading::decrementAndGet);
      Await.until("a leads", () -> aLed.get() == 1, 20_000);
      CompletableFuture<?> b = Leadership.run(replicaB, Installation.NAMESPACE, "warmmetal-controller", "b", fast,
          () -> {
            leading.incrementAndGet();
            bLed.incrementAndGet();
          }, leading::decrementAndGet);
      Thread.sleep(2500); // longer than a lease: b still must not lead while a renews
      assertThat(bLed.get()).isZero();
      assertThat(leading.get()).isEqualTo(1);
      Lease lease = cluster.admin().leases().inNamespace(Installation.NAMESPACE).withName("warmmetal-controller")
          .get();
      assertThat(lease.getSpec().getHolderIdentity()).isEqualTo("a");

      a.cancel(true); // a goes away (and releases the lease)
      Await.until("b takes over", () -> bLed.get() == 1, 20_000);
      assertThat(leading.get()).isEqualTo(1);
      b.cancel(true);
    }
  }
}
