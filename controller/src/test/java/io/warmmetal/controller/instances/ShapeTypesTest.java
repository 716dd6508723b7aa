package io.warmmetal.controller.instances;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.scheduling.InstanceType;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ShapeTypesTest {

  @Test
  void aShapeOffersItsPodsItsDisksAndWhereItsMachinesAre() throws Exception {
    var shapes =
        new ObjectMapper()
            .readTree(
                """
        [{"name": "x86-16c-64g", "arch": "x86_64", "cpus": 16, "memoryGiB": 64, "gpus": [], "diskGiB": 1000,
          "counts": {"warm": 2, "standby": 1}, "total": 3,
          "offerings": [{"zone": "r1", "region": "room-1", "counts": {"warm": 2}},
                        {"zone": "r2", "region": null, "counts": {"standby": 1}}]},
         {"name": "x86-4c-16g", "arch": "x86_64", "cpus": 4, "memoryGiB": 16, "gpus": [], "diskGiB": null,
          "counts": {}, "total": 0, "offerings": []}]""");
    var nodeClass = new WarmMetalNodeClass();
    nodeClass.getSpec().kubelet = new WarmMetalNodeClass.Kubelet();
    nodeClass.getSpec().kubelet.maxPods = 50;
    var types = ShapeTypes.of(shapes, nodeClass);
    var big = types.get(0).allocatable();
    assertThat(big.extended())
        .containsEntry("pods", 50L)
        .containsEntry("nodes", 1L)
        .containsEntry("ephemeral-storage", 900L << 30); // 90 %: the kubelet evicts below 10 % free
    assertThat(types.get(1).allocatable().extended()).doesNotContainKey("ephemeral-storage");
    // Standby machines count as to be had where the node class launches from standby (its default).
    assertThat(types.get(0).offerings())
        .containsExactly(
            new InstanceType.Offering("r1", "room-1", 2, 2),
            new InstanceType.Offering("r2", null, 1, 0));
    nodeClass.getSpec().launchFromStandby = false;
    assertThat(ShapeTypes.of(shapes, nodeClass).get(0).available()).isEqualTo(2);

    // What the kubelet will reserve (the node class's, passed to it by the join) is not planned
    // for pods: the allocatable the Node will report.
    nodeClass.getSpec().kubelet.systemReserved =
        Map.of("cpu", "100m", "memory", "1Gi", "pid", "1000");
    nodeClass.getSpec().kubelet.kubeReserved =
        Map.of("cpu", "200m", "memory", "512Mi", "ephemeral-storage", "10Gi");
    var reserved = ShapeTypes.of(shapes, nodeClass).get(0).allocatable();
    assertThat(reserved.cpuMilli()).isEqualTo(15_700);
    assertThat(reserved.memoryBytes()).isEqualTo((64L << 30) - (1536L << 20));
    assertThat(reserved.extended())
        .containsEntry("ephemeral-storage", (900L << 30) - (10L << 30))
        .containsEntry("pods", 50L);
    // Settings no kubelet takes reserve nothing here: the launch refuses the node class instead.
    nodeClass.getSpec().kubelet.kubeReserved = Map.of("gpu", "1");
    assertThat(ShapeTypes.of(shapes, nodeClass).get(0).allocatable().cpuMilli()).isEqualTo(16_000);
  }
}
