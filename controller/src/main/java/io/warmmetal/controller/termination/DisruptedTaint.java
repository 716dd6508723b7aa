package io.warmmetal.controller.termination;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.karpenter.WellKnown;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code karpenter.sh/disrupted:NoSchedule}: on a Node being drained, or chosen for disruption
 * while its replacement comes up, so no new pod lands there; lifted if the disruption is given up.
 */
public final class DisruptedTaint {
  private DisruptedTaint() {}

  public static boolean on(Node node) {
    return node.getSpec().getTaints() != null
        && node.getSpec().getTaints().stream()
            .anyMatch(t -> WellKnown.DISRUPTED_TAINT.equals(t.getKey()));
  }

  /** Taints the Node; true if it was not tainted yet. */
  public static boolean apply(KubernetesClient kube, Node node) {
    if (on(node)) {
      return false;
    }
    kube.nodes()
        .withName(node.getMetadata().getName())
        .edit(
            n -> {
              if (on(n)) {
                return n; // tainted since the informer's copy was read
              }
              List<Taint> more =
                  new ArrayList<>(
                      n.getSpec().getTaints() == null ? List.of() : n.getSpec().getTaints());
              more.add(
                  new TaintBuilder()
                      .withKey(WellKnown.DISRUPTED_TAINT)
                      .withEffect("NoSchedule")
                      .build());
              n.getSpec().setTaints(more);
              return n;
            });
    return true;
  }

  /** Lifts the taint, if there. */
  public static void remove(KubernetesClient kube, Node node) {
    if (!on(node)) {
      return;
    }
    kube.nodes()
        .withName(node.getMetadata().getName())
        .edit(
            n -> {
              n.getSpec()
                  .setTaints(
                      new ArrayList<>(
                          n.getSpec().getTaints().stream()
                              .filter(t -> !WellKnown.DISRUPTED_TAINT.equals(t.getKey()))
                              .toList()));
              return n;
            });
  }
}
