package io.warmmetal.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.e2e.cluster.Commands;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.protocol.testing.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The cluster fixture itself: a control plane that schedules, and a teardown that leaves nothing
 * behind.
 */
@Tag("cluster")
class ControlPlaneTest {

  @Test
  void aControlPlaneSchedulesAPodOntoANodeAndLeavesNothingBehind() throws Exception {
    ControlPlane cp = ControlPlane.start();
    String netns;
    Path dir;
    try {
      netns = cp.network().name();
      dir = cp.sandbox().dir;
      KubernetesClient kube = cp.admin();
      assertThat(kube.getKubernetesVersion().getGitVersion()).isEqualTo(ControlPlane.VERSION);
      // kubeadm's uploads are there for joining nodes.
      assertThat(kube.configMaps().inNamespace("kube-public").withName("cluster-info").get())
          .isNotNull();
      assertThat(kube.configMaps().inNamespace("kube-system").withName("kubelet-config-1.20").get())
          .isNotNull();

      Map<String, Quantity> capacity =
          Map.of(
              "cpu", new Quantity("4"), "memory", new Quantity("8Gi"), "pods", new Quantity("110"));
      kube.nodes()
          .resource(new NodeBuilder().withNewMetadata().withName("n1").endMetadata().build())
          .create();
      // A merge patch: kube-controller-manager writes the new Node too (its pod CIDR, taints).
      kube.nodes()
          .withName("n1")
          .subresource("status")
          .patch(
              PatchContext.of(PatchType.JSON_MERGE),
              Serialization.asJson(
                  new NodeBuilder()
                      .withNewStatus()
                      .withCapacity(capacity)
                      .withAllocatable(capacity)
                      .withConditions(
                          new NodeConditionBuilder()
                              .withType("Ready")
                              .withStatus("True")
                              .withLastHeartbeatTime(Instant.now().toString())
                              .build())
                      .endStatus()
                      .build()));
      Pod pod =
          new PodBuilder()
              .withNewMetadata()
              .withName("p")
              .withNamespace("default")
              .endMetadata()
              .withNewSpec()
              .addNewContainer()
              .withName("c")
              .withImage("busybox")
              .endContainer()
              .endSpec()
              .build();
      kube.pods().inNamespace("default").resource(pod).create();
      Await.until(
          "kube-scheduler binds the pod",
          () ->
              "n1"
                  .equals(
                      kube.pods()
                          .inNamespace("default")
                          .withName("p")
                          .get()
                          .getSpec()
                          .getNodeName()));
      // The namespace has no way out: its default route leads to a gateway nobody answers for.
      assertThat(
              Commands.attempt(
                      cp.network()
                          .enter(
                              List.of("curl", "-s", "--max-time", "2", "http://169.254.169.254/")),
                      Map.of(),
                      10)
                  .ok())
          .isFalse();
    } finally {
      cp.close();
    }
    assertThat(Commands.run("ip", "netns", "list")).doesNotContain(netns);
    assertThat(Files.exists(dir)).isFalse();
    assertThat(Commands.run("ps", "-eo", "args")).doesNotContain(dir.toString());
  }
}
