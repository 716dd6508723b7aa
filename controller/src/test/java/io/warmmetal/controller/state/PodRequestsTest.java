package io.warmmetal.controller.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.warmmetal.controller.scheduling.Resources;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A pod's requests as Kubernetes computes them (the cases of its resource helpers: init containers,
 * sidecars).
 */
class PodRequestsTest {
  private static final long MI = 1L << 20;

  private static Container container(String name, String cpu, String memory, String restartPolicy) {
    return new ContainerBuilder()
        .withName(name)
        .withRestartPolicy(restartPolicy)
        .withNewResources()
        .addToRequests("cpu", new Quantity(cpu))
        .addToRequests("memory", new Quantity(memory))
        .endResources()
        .build();
  }

  private static Pod pod(
      List<Container> init, List<Container> containers, Map<String, Quantity> overhead) {
    return new PodBuilder()
        .withNewMetadata()
        .withName("p")
        .withNamespace("default")
        .endMetadata()
        .withNewSpec()
        .withInitContainers(init)
        .withContainers(containers)
        .withOverhead(overhead)
        .endSpec()
        .build();
  }

  // Every pod also takes one of its node's pods.

  @Test
  void containersAddUp() {
    assertThat(
            PodRequests.effectiveRequests(
                pod(
                    List.of(),
                    List.of(
                        container("a", "500m", "100Mi", null),
                        container("b", "250m", "50Mi", null)),
                    null)))
        .isEqualTo(Resources.of(750, 150 * MI).with("pods", 1));
  }

  @Test
  void anInitContainerBiggerThanTheContainersSetsTheRequest() {
    // The init container runs alone before them: 2 cpu at that moment, more than the containers' 1.
    assertThat(
            PodRequests.effectiveRequests(
                pod(
                    List.of(container("migrate", "2", "64Mi", null)),
                    List.of(container("app", "1", "256Mi", null)),
                    null)))
        .isEqualTo(Resources.of(2000, 256 * MI).with("pods", 1));
  }

  @Test
  void sidecarsRunAlongTheContainersAndTheInitContainersAfterThem() {
    // A sidecar (restartPolicy Always) of 500m starts first; the init container after it runs with
    // it (1.5 cpu);
    // then the app runs with the sidecar (1 + 0.5). Kubernetes' answer: max(1.5, 1.5) cpu, memory
    // max(300, 400).
    Pod pod =
        pod(
            List.of(
                container("proxy", "500m", "100Mi", "Always"),
                container("init", "1", "200Mi", null)),
            List.of(container("app", "1", "300Mi", null)),
            null);
    assertThat(PodRequests.effectiveRequests(pod))
        .isEqualTo(Resources.of(1500, 400 * MI).with("pods", 1));
  }

  @Test
  void podLevelResourcesAreThePodsRequestForWhatTheyName() {
    // Kubernetes 1.32+: the pod's own cpu and memory stand for its containers'; what it does not
    // name (a GPU) is still its containers'; the overhead comes on top.
    Pod pod =
        pod(
            List.of(),
            List.of(
                new ContainerBuilder()
                    .withName("a")
                    .withNewResources()
                    .addToRequests("cpu", new Quantity("100m"))
                    .addToRequests("nvidia.com/gpu", new Quantity("1"))
                    .endResources()
                    .build(),
                new ContainerBuilder().withName("b").build()),
            Map.of("cpu", new Quantity("250m")));
    pod.getSpec()
        .setResources(
            new ResourceRequirementsBuilder()
                .addToRequests("cpu", new Quantity("2"))
                .addToRequests("memory", new Quantity("1Gi"))
                .build());
    assertThat(PodRequests.effectiveRequests(pod))
        .isEqualTo(Resources.of(2250, 1024 * MI).with("nvidia.com/gpu", 1).with("pods", 1));
  }

  @Test
  void theRuntimeClassOverheadIsAdded() {
    assertThat(
            PodRequests.effectiveRequests(
                pod(
                    List.of(),
                    List.of(container("app", "1", "1Gi", null)),
                    Map.of("cpu", new Quantity("250m"), "memory", new Quantity("120Mi")))))
        .isEqualTo(Resources.of(1250, 1144 * MI).with("pods", 1));
  }
}
