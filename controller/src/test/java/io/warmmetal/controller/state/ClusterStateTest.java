package io.warmmetal.controller.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.Resources;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a node is planned with: its Node's word once registered, its shape's before. */
class ClusterStateTest {
  private static final InstanceType SHAPE =
      new InstanceType(
          "x86-16c-64g",
          Map.of(),
          Resources.of(16_000, 64L << 30).with(PodRequests.PODS, 110).with("nodes", 1),
          0.5,
          1,
          List.of(new InstanceType.Offering("rack-1", null, 1, 1)));

  private static Node reporting(Map<String, Quantity> allocatable) {
    return new NodeBuilder()
        .withNewMetadata()
        .withName("wm-1")
        .endMetadata()
        .withNewStatus()
        .withAllocatable(allocatable)
        .endStatus()
        .build();
  }

  @Test
  void aRegisteredNodeIsPlannedWithWhatItsKubeletReportsAllocatable() {
    Resources real =
        ClusterState.allocatable(
            SHAPE,
            reporting(
                Map.of(
                    "cpu", new Quantity("15800m"),
                    "memory", new Quantity("62Gi"),
                    "pods", new Quantity("58"),
                    "nvidia.com/gpu", new Quantity("1"))));
    assertThat(real.cpuMilli()).isEqualTo(15_800);
    assertThat(real.memoryBytes()).isEqualTo(62L << 30);
    assertThat(real.extended())
        .containsEntry(PodRequests.PODS, 58L)
        .containsEntry("nvidia.com/gpu", 1L)
        .as("what the kubelet does not report stays as the shape promises")
        .containsEntry("nodes", 1L);
  }

  @Test
  void aNodeThatReportsNothingYetHasWhatItsShapePromises() {
    assertThat(ClusterState.allocatable(SHAPE, reporting(Map.of()))).isEqualTo(SHAPE.allocatable());
    assertThat(ClusterState.allocatable(SHAPE, new NodeBuilder().build()))
        .isEqualTo(SHAPE.allocatable());
  }
}
