package io.warmmetal.controller.state;

import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import java.util.HashMap;
import java.util.Map;

/**
 * What instance types mean for nodes: the labels a NodePool gives each of its nodes, the keys an
 * instance type defines, and the resources a node counts as beyond cpu and memory.
 */
public final class InstanceTypes {
  public static final String EPHEMERAL_STORAGE = "ephemeral-storage";

  /** What a node counts as against a NodePool's {@code limits.nodes}. */
  public static final String NODES = "nodes";

  private InstanceTypes() {}

  /**
   * The labels every node of the pool gets, as Karpenter derives them: the template's labels; for a
   * requirement {@code In} one value on a key no instance type here defines, that value (so pods
   * that select the key fit, as upstream's requirement labels do) — but for the topology keys,
   * which come from the machines; and the pool's name.
   */
  public static Map<String, String> poolLabels(NodePool pool) {
    var template = pool.getSpec().template;
    Map<String, String> labels = new HashMap<>();
    for (Requirement r : template.spec.requirements) {
      if ("In".equals(r.getOperator())
          && r.getValues().size() == 1
          && !defines(r.getKey())
          && !r.getKey().equals(WellKnown.ZONE_LABEL)
          && !r.getKey().equals(WellKnown.REGION_LABEL)) {
        labels.put(r.getKey(), r.getValues().get(0));
      }
    }
    if (template.metadata.labels != null) {
      labels.putAll(template.metadata.labels);
    }
    labels.put(WellKnown.NODEPOOL_LABEL, pool.getMetadata().getName());
    return labels;
  }

  /** Whether the instance types here carry a label for {@code key}. */
  public static boolean defines(String key) {
    return key.equals(WellKnown.INSTANCE_TYPE_LABEL)
        || key.equals(WellKnown.CAPACITY_TYPE_LABEL)
        || key.equals(WellKnown.ARCH_LABEL)
        || key.equals(WellKnown.OS_LABEL)
        || key.startsWith("warmmetal.io/");
  }
}
