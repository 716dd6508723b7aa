package io.warmmetal.controller.buffers;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import io.warmmetal.controller.scheduling.Resources;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * How many chunks a buffer asks for: Karpenter's documented table ({@code
 * concepts/capacitybuffers}, "Replica Calculation") and the edges of its helpers' tests.
 */
class BufferReplicasTest {
  private static final Resources ONE_CPU = Resources.of(1000, 1L << 30).with("pods", 1);

  private static CapacityBuffer.Spec spec(Integer replicas, Integer percentage, String cpuLimit) {
    CapacityBuffer.Spec spec = new CapacityBuffer.Spec();
    spec.replicas = replicas;
    spec.percentage = percentage;
    if (cpuLimit != null) {
      spec.limits = Map.of("cpu", new Quantity(cpuLimit));
    }
    return spec;
  }

  /** Rows of upstream's table: a 10-replica Deployment where one is named, 1 CPU per pod. */
  @ParameterizedTest(name = "replicas {0}, percentage {1}, cpu limit {2} → {3}")
  @CsvSource(
      nullValues = "-",
      value = {
        "5,  -,  -, 5", // replicas: 5 only
        "-,  20, -, 2", // percentage: 20 with a 10-replica Deployment
        "5,  80, -, 8", // the max of 5 and 8
        "10, -,  3, 3", // the min of 10 and 3
        "5,  80, 4, 4", // min(max(5, 8), 4)
        "-,  -,  5, 5" // limits only
      })
  void upstreamsReplicaCalculationTable(
      Integer replicas, Integer percentage, String cpuLimit, int expected) {
    Integer scalable = percentage == null ? null : 10;
    assertThat(BufferReplicas.of(spec(replicas, percentage, cpuLimit), ONE_CPU, scalable))
        .isEqualTo(expected);
  }

  @Test
  void aPercentageRoundsUpAndIsAtLeastOne() {
    assertThat(BufferReplicas.fromPercentage(20, 10)).isEqualTo(2);
    assertThat(BufferReplicas.fromPercentage(33, 10)).isEqualTo(4); // 3.3 → 4
    assertThat(BufferReplicas.fromPercentage(1, 3)).isEqualTo(1); // 0.03 → at least one
    assertThat(BufferReplicas.fromPercentage(100, 7)).isEqualTo(7);
    assertThat(BufferReplicas.fromPercentage(150, 10)).isEqualTo(15);
    assertThat(BufferReplicas.fromPercentage(0, 10)).isZero();
    assertThat(BufferReplicas.fromPercentage(20, 0)).isZero();
    assertThat(BufferReplicas.fromPercentage(50, 1_000_000)).isEqualTo(500_000);
  }

  @Test
  void limitsFitWholeChunksOfEveryResourceTheyName() {
    Resources chunk = Resources.of(2000, 4L << 30).with("pods", 1);
    // The docs' example: 2 CPU and 4Gi a chunk in cpu 20, memory 40Gi → min(10, 10).
    assertThat(
            BufferReplicas.fitting(
                Map.of("cpu", new Quantity("20"), "memory", new Quantity("40Gi")), chunk))
        .isEqualTo(10);
    assertThat(
            BufferReplicas.fitting(
                Map.of("cpu", new Quantity("20"), "memory", new Quantity("9Gi")), chunk))
        .isEqualTo(2); // the tighter resource, rounded down
    assertThat(BufferReplicas.fitting(Map.of("cpu", new Quantity("1500m")), chunk)).isZero();
    assertThat(BufferReplicas.fitting(Map.of("cpu", new Quantity("2500m")), chunk)).isEqualTo(1);
    // A resource the chunk does not request caps nothing (nor does the pod count every pod has).
    assertThat(BufferReplicas.fitting(Map.of("nvidia.com/gpu", new Quantity("4")), chunk)).isNull();
    assertThat(BufferReplicas.fitting(Map.of("pods", new Quantity("4")), chunk)).isNull();
    CapacityBuffer.Spec spec = spec(3, null, null);
    spec.limits = new HashMap<>(Map.of("nvidia.com/gpu", new Quantity("4")));
    assertThat(BufferReplicas.of(spec, chunk, null)).isEqualTo(3);
    // Extended resources count in units.
    assertThat(
            BufferReplicas.fitting(
                Map.of("nvidia.com/gpu", new Quantity("4")), chunk.with("nvidia.com/gpu", 2)))
        .isEqualTo(2);
  }

  @Test
  void aPercentageOfAScalableWithNoReplicasIsNothing() {
    assertThat(BufferReplicas.of(spec(null, 20, null), ONE_CPU, 0)).isZero();
    assertThat(BufferReplicas.of(spec(2, 20, null), ONE_CPU, 0)).isEqualTo(2);
    // A PodTemplate buffer has no scalable: its percentage means nothing.
    assertThat(BufferReplicas.of(spec(2, 90, null), ONE_CPU, null)).isEqualTo(2);
  }
}
