package io.warmmetal.controller.scheduling;

import io.fabric8.kubernetes.api.model.LabelSelector;
import java.util.Set;

/**
 * A required pod (anti-)affinity term: which pods it is about (a label selector, in some namespaces
 * — {@code null}: all of them) and the topology key whose domains it counts in (a node for {@code
 * kubernetes.io/hostname}).
 */
public record PodAffinityTerm(LabelSelector selector, Set<String> namespaces, String topologyKey) {
  public static final String HOSTNAME = "kubernetes.io/hostname";

  /** Whether the term is about {@code pod}. */
  public boolean selects(PodRequest pod) {
    if (namespaces != null && !namespaces.contains(pod.namespace())) {
      return false;
    }
    return LabelSelectors.matches(selector, pod.labels());
  }
}
