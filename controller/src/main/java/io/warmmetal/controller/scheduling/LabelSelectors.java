package io.warmmetal.controller.scheduling;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.Map;

/** Label selectors as Kubernetes evaluates them (pod anti-affinity, PodDisruptionBudgets). */
public final class LabelSelectors {
  private LabelSelectors() {}

  /**
   * Whether the selector selects these labels; a null selector selects nothing, an empty one
   * everything.
   */
  public static boolean matches(LabelSelector selector, Map<String, String> labels) {
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
        boolean ok =
            switch (r.getOperator()) {
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
