package io.warmmetal.controller.karpenter;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;

/** A Node's {@code Ready} condition, as its kubelet last reported it. */
public final class NodeReadiness {
  private NodeReadiness() {}

  /** The condition, or null when the Node (or its status) has none yet. */
  public static NodeCondition condition(Node node) {
    if (node == null || node.getStatus() == null || node.getStatus().getConditions() == null) {
      return null;
    }
    return node.getStatus().getConditions().stream()
        .filter(c -> "Ready".equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  /** Whether the Node is Ready (false for none). */
  public static boolean ready(Node node) {
    NodeCondition c = condition(node);
    return c != null && "True".equals(c.getStatus());
  }
}
