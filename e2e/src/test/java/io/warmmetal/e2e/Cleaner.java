package io.warmmetal.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.warmmetal.api.testing.Await;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.util.List;

/**
 * Returns the shared control plane to how a test found it: no NodeClaims (their finalizers dropped: no controller is
 * left to honour them), NodePools, node classes, Nodes, workloads in {@code default}, bootstrap tokens or leases of
 * ours. The CRDs and RBAC stay: installing them again is idempotent.
 */
final class Cleaner {
  private Cleaner() {}

  static void clean(KubernetesClient kube) {
    quietly(() -> kube.resources(NodeClaim.class).list().getItems().forEach(c -> quietly(() ->
        kube.resources(NodeClaim.class).withName(c.getMetadata().getName()).edit(e -> {
          e.getMetadata().setFinalizers(List.of());
          return e;
        }))));
    quietly(() -> kube.resources(NodeClaim.class).delete());
    quietly(() -> kube.resources(NodePool.class).delete());
    quietly(() -> kube.resources(WarmMetalNodeClass.class).delete());
    quietly(() -> kube.apps().deployments().inNamespace("default").delete());
    quietly(() -> kube.apps().replicaSets().inNamespace("default").delete());
    quietly(() -> kube.policy().v1().podDisruptionBudget().inNamespace("default").delete());
    quietly(() -> kube.pods().inNamespace("default").withGracePeriod(0).delete());
    quietly(() -> kube.nodes().delete());
    quietly(() -> kube.secrets().inNamespace("kube-system")
        .withLabel("app.kubernetes.io/managed-by", "warmmetal-controller").delete());
    quietly(() -> kube.leases().inNamespace(Installation.NAMESPACE).delete());
    quietly(() -> kube.leases().inNamespace("kube-node-lease").delete());
    try {
      Await.until("the cluster empty", () -> kube.resources(NodeClaim.class).list().getItems().isEmpty()
          && kube.pods().inNamespace("default").list().getItems().isEmpty()
          && kube.nodes().list().getItems().isEmpty());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void quietly(Runnable step) {
    try {
      step.run();
    } catch (KubernetesClientException e) {
      // not there, or gone meanwhile
    }
  }
}
