package io.warmmetal.controller.scheduling;

import io.fabric8.kubernetes.api.model.Toleration;
import io.warmmetal.controller.karpenter.Requirement;
import java.util.List;
import java.util.Map;

/**
 * What scheduling a pending pod needs: its requests, its nodeSelector, its required node affinity (any one of the
 * terms, each a list of requirements that must all hold), its tolerations and the host ports it binds.
 */
public record PodRequest(String name, Resources requests, Map<String, String> nodeSelector,
    List<List<Requirement>> affinityTerms, List<Toleration> tolerations, List<HostPort> hostPorts) {

  public PodRequest(String name, Resources requests, Map<String, String> nodeSelector,
      List<List<Requirement>> affinityTerms, List<Toleration> tolerations) {
    this(name, requests, nodeSelector, affinityTerms, tolerations, List.of());
  }

  /** Whether the two cannot share a node: a host port of one is a host port of the other. */
  public boolean portsConflictWith(PodRequest other) {
    return hostPorts.stream().anyMatch(p -> other.hostPorts.stream().anyMatch(p::conflictsWith));
  }

  /** Whether a node with these labels satisfies the pod's selector and affinity. */
  public boolean accepts(Map<String, String> labels) {
    for (Map.Entry<String, String> s : nodeSelector.entrySet()) {
      if (!s.getValue().equals(labels.get(s.getKey()))) {
        return false;
      }
    }
    if (affinityTerms.isEmpty()) {
      return true;
    }
    return affinityTerms.stream().anyMatch(term -> term.stream().allMatch(r -> r.matches(labels)));
  }

  /** Whether the pod tolerates every NoSchedule/NoExecute taint in {@code taints}. */
  public boolean tolerates(List<io.fabric8.kubernetes.api.model.Taint> taints) {
    for (var taint : taints) {
      if ("PreferNoSchedule".equals(taint.getEffect())) {
        continue;
      }
      boolean tolerated = tolerations.stream().anyMatch(t -> tolerates(t, taint));
      if (!tolerated) {
        return false;
      }
    }
    return true;
  }

  private static boolean tolerates(Toleration t, io.fabric8.kubernetes.api.model.Taint taint) {
    if (t.getEffect() != null && !t.getEffect().isEmpty() && !t.getEffect().equals(taint.getEffect())) {
      return false;
    }
    if (t.getKey() == null || t.getKey().isEmpty()) {
      return "Exists".equals(t.getOperator()); // an empty key with Exists tolerates everything
    }
    if (!t.getKey().equals(taint.getKey())) {
      return false;
    }
    return "Exists".equals(t.getOperator()) || java.util.Objects.equals(t.getValue(), taint.getValue());
  }
}
