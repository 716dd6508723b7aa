package io.warmmetal.controller.provisioning;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Resources;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Pods as the scheduler sees them. */
public final class PodRequests {
  private PodRequests() {}

  /** A pod kube-scheduler could not place: not bound, and marked Unschedulable. */
  public static boolean unschedulable(Pod pod) {
    if (pod.getSpec() == null || pod.getSpec().getNodeName() != null || pod.getStatus() == null
        || pod.getMetadata().getDeletionTimestamp() != null) {
      return false;
    }
    for (PodCondition c : pod.getStatus().getConditions()) {
      if ("PodScheduled".equals(c.getType()) && "False".equals(c.getStatus()) && "Unschedulable".equals(c.getReason())) {
        return true;
      }
    }
    return false;
  }

  public static PodRequest of(Pod pod) {
    Resources requests = Resources.NONE;
    for (Container c : pod.getSpec().getContainers()) {
      if (c.getResources() != null && c.getResources().getRequests() != null) {
        requests = requests.plus(of(c.getResources().getRequests()));
      }
    }
    List<List<Requirement>> terms = new ArrayList<>();
    var affinity = pod.getSpec().getAffinity();
    if (affinity != null && affinity.getNodeAffinity() != null
        && affinity.getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution() != null) {
      for (NodeSelectorTerm term : affinity.getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution()
          .getNodeSelectorTerms()) {
        List<Requirement> all = new ArrayList<>();
        for (NodeSelectorRequirement r : term.getMatchExpressions()) {
          all.add(new Requirement(r.getKey(), r.getOperator(), r.getValues()));
        }
        terms.add(all);
      }
    }
    return new PodRequest(pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName(), requests,
        pod.getSpec().getNodeSelector() == null ? Map.of() : pod.getSpec().getNodeSelector(), terms,
        pod.getSpec().getTolerations() == null ? List.of() : pod.getSpec().getTolerations());
  }

  /** cpu → millicores, memory → bytes, anything else → units. */
  public static Resources of(Map<String, Quantity> quantities) {
    Resources r = Resources.NONE;
    for (Map.Entry<String, Quantity> e : quantities.entrySet()) {
      BigDecimal amount = Quantity.getAmountInBytes(e.getValue());
      r = switch (e.getKey()) {
        case "cpu" -> r.plus(Resources.of(amount.multiply(BigDecimal.valueOf(1000)).longValue(), 0));
        case "memory" -> r.plus(Resources.of(0, amount.longValue()));
        default -> r.with(e.getKey(), amount.longValue());
      };
    }
    return r;
  }
}
