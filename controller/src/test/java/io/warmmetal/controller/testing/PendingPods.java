package io.warmmetal.controller.testing;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.Map;

/** Pods as kube-scheduler leaves those it found no node for: what a pass provisions for. */
public final class PendingPods {
  private PendingPods() {}

  /** A pod in {@code default}, one container asking for these, PodScheduled=False Unschedulable. */
  public static Pod unschedulable(String name, Map<String, Quantity> requests) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("default")
        .endMetadata()
        .withNewSpec()
        .addNewContainer()
        .withName("app")
        .withImage("busybox")
        .withNewResources()
        .addToRequests(requests)
        .endResources()
        .endContainer()
        .endSpec()
        .withNewStatus()
        .addNewCondition()
        .withType("PodScheduled")
        .withStatus("False")
        .withReason("Unschedulable")
        .endCondition()
        .endStatus()
        .build();
  }
}
