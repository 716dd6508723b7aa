package io.warmmetal.controller.termination;

import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;

/**
 * The cluster's PodDisruptionBudgets, informed from {@code policy/v1} where the API server serves
 * it and from {@code policy/v1beta1} where it does not (Kubernetes before 1.21) — read as {@code
 * policy/v1} objects either way: the two have the same fields. (One difference in meaning stays: in
 * v1beta1 an empty selector selects no pods.)
 */
public final class DisruptionBudgets implements AutoCloseable {
  private final SharedIndexInformer<PodDisruptionBudget> v1;
  private final SharedIndexInformer<
          io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudget>
      v1beta1;

  private DisruptionBudgets(
      SharedIndexInformer<PodDisruptionBudget> v1,
      SharedIndexInformer<io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudget>
          v1beta1) {
    this.v1 = v1;
    this.v1beta1 = v1beta1;
  }

  @SuppressWarnings("unchecked")
  public static DisruptionBudgets inform(KubernetesClient kube, ResourceEventHandler<?> handler) {
    if (kube.supports(PodDisruptionBudget.class)) {
      return new DisruptionBudgets(
          kube.resources(PodDisruptionBudget.class)
              .inAnyNamespace()
              .inform((ResourceEventHandler<PodDisruptionBudget>) handler),
          null);
    }
    return new DisruptionBudgets(
        null,
        kube.resources(io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudget.class)
            .inAnyNamespace()
            .inform(
                (ResourceEventHandler<
                        io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudget>)
                    handler));
  }

  public List<PodDisruptionBudget> list() {
    if (v1 != null) {
      return v1.getStore().list();
    }
    return v1beta1.getStore().list().stream()
        .map(
            b -> {
              PodDisruptionBudget converted =
                  Serialization.unmarshal(Serialization.asJson(b), PodDisruptionBudget.class);
              converted.setApiVersion("policy/v1");
              return converted;
            })
        .toList();
  }

  @Override
  public void close() {
    if (v1 != null) {
      v1.close();
    } else {
      v1beta1.close();
    }
  }
}
