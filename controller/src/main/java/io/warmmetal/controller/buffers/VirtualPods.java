package io.warmmetal.controller.buffers;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.controller.karpenter.WellKnown;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A buffer's virtual pods, as upstream builds them: {@code replicas} copies of the resolved
 * template — its labels (spread and affinity see them), its spec with no node name and the lowest
 * priority — named {@code capacity-buffer-<buffer>-<i>}, marked as virtual and with their buffer,
 * and Unschedulable, so provisioning takes them for pending pods. Container requests a template
 * leaves out default to its limits, as the API server defaults a real pod's. They are never created
 * in the cluster.
 */
public final class VirtualPods {
  /** Upstream's: lower than any real pod's. */
  static final int PRIORITY = Integer.MIN_VALUE;

  private VirtualPods() {}

  /** The first of them: what one chunk is (its requests size the buffer's limits). */
  static Pod chunk(CapacityBuffer buffer, PodTemplateSpec template) {
    return pod(buffer, template, 1, Instant.now().toString());
  }

  public static List<Pod> of(CapacityBuffer buffer, PodTemplateSpec template, int replicas) {
    String now = Instant.now().toString();
    List<Pod> pods = new ArrayList<>();
    for (int i = 1; i <= replicas; i++) {
      pods.add(pod(buffer, template, i, now));
    }
    return pods;
  }

  private static Pod pod(CapacityBuffer buffer, PodTemplateSpec template, int i, String now) {
    PodSpec spec =
        template.getSpec() == null
            ? new PodSpec()
            : Serialization.clone(template.getSpec()); // each pod its own: nothing shared
    spec.setNodeName(null);
    spec.setPriority(PRIORITY);
    defaultRequests(spec.getContainers());
    defaultRequests(spec.getInitContainers());
    Map<String, String> labels =
        template.getMetadata() == null || template.getMetadata().getLabels() == null
            ? null
            : new HashMap<>(template.getMetadata().getLabels());
    return new PodBuilder()
        .withMetadata(
            new ObjectMetaBuilder()
                .withName("capacity-buffer-" + buffer.getMetadata().getName() + "-" + i)
                .withNamespace(buffer.getMetadata().getNamespace())
                .withUid(buffer.getMetadata().getUid() + "-" + i)
                .withLabels(labels)
                .withAnnotations(
                    Map.of(
                        WellKnown.CAPACITY_BUFFER_FAKE_POD_ANNOTATION, "true",
                        WellKnown.CAPACITY_BUFFER_NAME_ANNOTATION, buffer.getMetadata().getName(),
                        WellKnown.CAPACITY_BUFFER_NAMESPACE_ANNOTATION,
                            buffer.getMetadata().getNamespace()))
                .withCreationTimestamp(now)
                .build())
        .withSpec(spec)
        .withNewStatus()
        .withConditions(
            new PodConditionBuilder()
                .withType("PodScheduled")
                .withStatus("False")
                .withReason("Unschedulable")
                .build())
        .endStatus()
        .build();
  }

  /** A limit without a request is also the request, as the API server defaults a pod. */
  private static void defaultRequests(List<Container> containers) {
    if (containers == null) {
      return;
    }
    for (Container c : containers) {
      if (c.getResources() == null || c.getResources().getLimits() == null) {
        continue;
      }
      Map<String, Quantity> requests =
          new HashMap<>(
              c.getResources().getRequests() == null ? Map.of() : c.getResources().getRequests());
      c.getResources().getLimits().forEach(requests::putIfAbsent);
      c.getResources().setRequests(requests);
    }
  }
}
