package io.warmmetal.controller.scheduling;

import io.fabric8.kubernetes.api.model.Toleration;
import io.warmmetal.controller.karpenter.Requirement;
import java.util.List;
import java.util.Map;

/**
 * What scheduling a pod needs: its requests, its nodeSelector, its required node affinity (any one of the terms,
 * each a list of requirements that must all hold), its tolerations, the host ports it binds, and — for pod
 * anti-affinity — its namespace, its labels and its own required anti-affinity terms.
 */
public record PodRequest(String name, Resources requests, Map<String, String> nodeSelector,
    List<List<Requirement>> affinityTerms, List<Toleration> tolerations, List<HostPort> hostPorts, String namespace,
    Map<String, String> labels, List<PodAffinityTerm> antiAffinity) {

  public PodRequest(String name, Resources requests, Map<String, String> nodeSelector,
      List<List<Requirement>> affinityTerms, List<Toleration> tolerations) {
    this(name, requests, nodeSelector, affinityTerms, tolerations, List.of(), "default", Map.of(), List.of());
  }

  public PodRequest withHostPorts(List<HostPort> ports) {
    return new PodRequest(name, requests, nodeSelector, affinityTerms, tolerations, ports, namespace, labels,
        antiAffinity);
  }

  public PodRequest withIdentity(String namespace, Map<String, String> labels) {
    return new PodRequest(name, requests, nodeSelector, affinityTerms, tolerations, hostPorts, namespace, labels,
        antiAffinity);
  }

  public PodRequest withAntiAffinity(List<PodAffinityTerm> terms) {
    return new PodRequest(name, requests, nodeSelector, affinityTerms, tolerations, hostPorts, namespace, labels,
        terms);
  }

  /**
   * Whether the two may not share a topology domain of {@code key} (a node, for the hostname key): a required
   * anti-affinity term of either, on that key, selects the other — Kubernetes checks both directions.
   */
  public boolean repels(PodRequest other, String key) {
    return antiAffinity.stream().anyMatch(t -> t.topologyKey().equals(key) && t.selects(other))
        || other.antiAffinity.stream().anyMatch(t -> t.topologyKey().equals(key) && t.selects(this));
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
