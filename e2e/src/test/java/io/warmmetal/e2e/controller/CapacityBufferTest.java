package io.warmmetal.e2e.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.controller.buffers.CapacityBuffer;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.RealCluster;
import io.warmmetal.protocol.testing.Await;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An active CapacityBuffer on a real control plane (Kubernetes 1.20: the CRD installs, its CEL
 * rules dropped): Karpenter's documented buffer, applied as its docs write it ({@code v1alpha1}),
 * keeps a Ready node of spare room; a pod kube-scheduler places there starts without a launch; the
 * room it took is replenished from the warm pool. The controller runs as its ServiceAccount, with
 * exactly the RBAC {@code deploy/controller.yaml} gives it.
 */
@ExtendWith({VertxExtension.class, RealCluster.class})
@Tag("cluster")
class CapacityBufferTest {
  private static final Path DOCS_EXAMPLE =
      Path.of("..", "controller", "src", "test", "resources", "buffers", "karpenter-docs.yaml");
  private Fleet cluster;
  private KubernetesClient kube;

  /** Three warm machines of 16 CPU, the default NodePool, the controller up. */
  @BeforeEach
  void start(Vertx vertx, ControlPlane controlPlane) throws Exception {
    cluster = Fleet.start(vertx, controlPlane, 3, pool -> {});
    kube = cluster.kube;
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  private CapacityBuffer buffer() {
    return kube.resources(CapacityBuffer.class)
        .inNamespace("default")
        .withName("web-app-buffer")
        .get();
  }

  private boolean provisioned() {
    CapacityBuffer buffer = buffer();
    return buffer.getStatus() != null
        && Conditions.isTrue(buffer.getStatus().conditions, CapacityBuffer.PROVISIONING);
  }

  private List<NodeClaim> initialized() {
    return cluster.initialized();
  }

  @Test
  void aBufferKeepsAReadyNodeOfRoomAPodStartsThereAndTheRoomIsReplenished() throws Exception {
    try (InputStream in = Files.newInputStream(DOCS_EXAMPLE)) {
      for (HasMetadata item : kube.load(in).items()) {
        kube.resource(item).create(); // the buffer as v1alpha1, as Karpenter's docs have it
      }
    }

    // Its 5 chunks of 2 CPU and 4Gi: one node, launched from the warm pool, Ready.
    // Provisioned counts a node on its way as room (upstream's existing capacity): wait for it to
    // be initialized too.
    Await.until(
        "the buffer's node Ready and the buffer provisioned",
        () -> provisioned() && initialized().size() == 1,
        60_000);
    assertThat(initialized()).hasSize(1);
    String roomy = initialized().get(0).getStatus().nodeName;
    CapacityBuffer.Status status = buffer().getStatus();
    assertThat(status.replicas).isEqualTo(5);
    assertThat(status.podTemplateRef.name).isEqualTo("web-buffer-template");
    assertThat(status.provisioningStrategy).isEqualTo(CapacityBuffer.ACTIVE_CAPACITY);
    assertThat(Conditions.get(status.conditions, CapacityBuffer.READY_FOR_PROVISIONING).getReason())
        .isEqualTo("Resolved");
    assertThat(Conditions.get(status.conditions, CapacityBuffer.PROVISIONING).getMessage())
        .isEqualTo("All 5 virtual pods fit on existing capacity");
    assertThat(cluster.warm()).isEqualTo(2);
    assertThat(kube.pods().inNamespace("default").list().getItems()).isEmpty(); // none created

    // A pod arrives: kube-scheduler puts it in the room at once — nothing launched for it, nothing
    // pending.
    cluster.create(Fleet.pod("burst", "8"));
    assertThat(cluster.awaitScheduled("burst")).isEqualTo(roomy);
    Pod burst = kube.pods().inNamespace("default").withName("burst").get();
    assertThat(burst.getStatus().getConditions())
        .noneMatch(c -> "PodScheduled".equals(c.getType()) && "False".equals(c.getStatus()));
    assertThat(cluster.controllerEvent("Nominated", "burst")).isFalse();

    // Beside it the buffer's 10 CPU no longer fit: the room is replenished, from the warm pool.
    Await.until("the room replenished", () -> initialized().size() == 2 && provisioned(), 60_000);
    assertThat(cluster.warm()).isEqualTo(1);
    cluster.awaitPasses(3);
    assertThat(cluster.claims()).hasSize(2);
  }
}
