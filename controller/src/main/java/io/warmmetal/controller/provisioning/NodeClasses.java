package io.warmmetal.controller.provisioning;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.karpenter.NodeClaimTemplate;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;

/** Resolves a {@code nodeClassRef} to our node class, if it names one that exists. */
public final class NodeClasses {
  private NodeClasses() {}

  public static WarmMetalNodeClass of(KubernetesClient kube, NodeClaimTemplate.Spec spec) {
    if (spec.nodeClassRef == null || !"WarmMetalNodeClass".equals(spec.nodeClassRef.kind)) {
      return null;
    }
    return kube.resources(WarmMetalNodeClass.class).withName(spec.nodeClassRef.name).get();
  }
}
