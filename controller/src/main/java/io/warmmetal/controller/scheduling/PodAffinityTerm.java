package io.warmmetal.controller.scheduling;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.Map;
import java.util.Set;

/**
 * A required pod (anti-)affinity term: which pods it is about (a label selector, in some namespaces — {@code null}:
 * all of them) and the topology key whose domains it counts in (a node for {@code kubernetes.io/hostname}).
 */
public record PodAffinityTerm(LabelSelector selector, Set<String> namespaces, String topologyKey) {
  public static final String HOSTNAME = "kubernetes.io/hostname";

  /** Whether the term is about {@code pod}. */
  public boolean selects(PodRequest pod) {
    if (namespaces != null && !namespaces.contains(pod.namespace())) {
      return false;
    }
    return matches(selector, pod.labels());
  }

  /** A label selector as Kubernetes evaluates it; a null selector selects nothing, an empty one everything. */
  static boolean matches(LabelSelector selector, Map<String, String> labels) {
    if (selector == null) {
      return false;
    }
    if (selector.getMatchLabels() != null) {
      for (Map.Entry<String, String> e : selector.getMatchLabels().entrySet()) {
        if (!e.getValue().equals(labels.get(e.getKey()))) {
          return false;
        }
      }
    }
    if (selector.getMatchExpressions() != null) {
      for (LabelSelectorRequirement r : selector.getMatchExpressions()) {
        String value = labels.get(r.getKey());
        boolean ok = switch (r.getOperator()) {
          case "In" -> value != null && r.getValues().contains(value);
          case "NotIn" -> value == null || !r.getValues().contains(value);
          case "Exists" -> value != null;
          case "DoesNotExist" -> value == null;
          default -> false;
        };
        if (!ok) {
          return false;
        }
      }
    }
    return true;
  }
}
