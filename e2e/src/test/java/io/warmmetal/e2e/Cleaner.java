package io.warmmetal.e2e;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.warmmetal.controller.buffers.CapacityBuffer;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.protocol.testing.Await;
import java.util.List;

/**
 * Returns the shared control plane to how a test found it: no NodeClaims or Nodes (their finalizers
 * dropped: no controller is left to honour them), NodePools, node classes, Nodes, workloads in
 * {@code default} (CapacityBuffers, PodTemplates and PersistentVolumeClaims among them), volumes
 * and storage classes labelled {@link #TEST_LABEL}, bootstrap tokens or leases of ours. The CRDs
 * and RBAC stay: installing them again is idempotent.
 */
public final class Cleaner {
  /** On cluster-scoped objects a test makes (volumes, storage classes): removed after it. */
  public static final String TEST_LABEL = "warmmetal.io/e2e";

  private Cleaner() {}

  static void clean(KubernetesClient kube) {
    quietly(() -> kube.resources(NodePool.class).delete());
    quietly(() -> kube.resources(WarmMetalNodeClass.class).delete());
    quietly(() -> kube.resources(CapacityBuffer.class).inNamespace("default").delete());
    quietly(() -> kube.v1().podTemplates().inNamespace("default").delete());
    quietly(() -> kube.apps().deployments().inNamespace("default").delete());
    quietly(() -> kube.apps().replicaSets().inNamespace("default").delete());
    quietly(() -> kube.policy().v1beta1().podDisruptionBudget().inNamespace("default").delete());
    quietly(
        () ->
            kube.secrets()
                .inNamespace("kube-system")
                .withLabel("app.kubernetes.io/managed-by", "warmmetal-controller")
                .delete());
    quietly(() -> kube.leases().inNamespace(Installation.NAMESPACE).delete());
    try {
      // Again until all are gone: a join or a launch that was under way may still add one.
      Await.until(
          "the cluster empty",
          () -> {
            dropFinalizers(kube.resources(NodeClaim.class));
            quietly(() -> kube.resources(NodeClaim.class).delete());
            quietly(() -> kube.pods().inNamespace("default").withGracePeriod(0).delete());
            quietly(() -> kube.persistentVolumeClaims().inNamespace("default").delete());
            quietly(() -> kube.persistentVolumes().withLabel(TEST_LABEL).delete());
            quietly(() -> kube.storage().v1().storageClasses().withLabel(TEST_LABEL).delete());
            dropFinalizers(kube.nodes());
            quietly(() -> kube.nodes().delete());
            quietly(() -> kube.leases().inNamespace("kube-node-lease").delete());
            return kube.resources(NodeClaim.class).list().getItems().isEmpty()
                && kube.pods().inNamespace("default").list().getItems().isEmpty()
                && kube.persistentVolumeClaims().inNamespace("default").list().getItems().isEmpty()
                && kube.persistentVolumes().withLabel(TEST_LABEL).list().getItems().isEmpty()
                && kube.nodes().list().getItems().isEmpty();
          });
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (AssertionError e) {
      throw new AssertionError(
          e.getMessage()
              + "; left: NodeClaims "
              + names(kube.resources(NodeClaim.class).list().getItems())
              + ", pods "
              + names(kube.pods().inNamespace("default").list().getItems())
              + ", Nodes "
              + names(kube.nodes().list().getItems()));
    }
  }

  /** Drops every object's finalizers: no controller is left to honour them. */
  private static <T extends HasMetadata> void dropFinalizers(
      NonNamespaceOperation<T, ? extends KubernetesResourceList<T>, ? extends Resource<T>> kind) {
    quietly(
        () ->
            kind.list()
                .getItems()
                .forEach(
                    i ->
                        quietly(
                            () ->
                                kind.withName(i.getMetadata().getName())
                                    .patch(
                                        PatchContext.of(PatchType.JSON_MERGE),
                                        "{\"metadata\": {\"finalizers\": null}}"))));
  }

  private static String names(List<? extends HasMetadata> items) {
    return items.stream()
        .map(
            i ->
                i.getMetadata().getName()
                    + (i.getMetadata().getFinalizers() == null
                            || i.getMetadata().getFinalizers().isEmpty()
                        ? ""
                        : i.getMetadata().getFinalizers().toString()))
        .toList()
        .toString();
  }

  private static void quietly(Runnable step) {
    try {
      step.run();
    } catch (KubernetesClientException e) {
      // not there, or gone meanwhile
    }
  }
}
