package io.warmmetal.controller.scheduling;

import io.fabric8.kubernetes.api.model.Taint;
import io.warmmetal.controller.karpenter.Requirement;
import java.util.List;
import java.util.Map;

/**
 * A NodePool as the scheduler sees it: its weight, the labels its nodes get, its requirements, its taints (startup
 * taints do not count: they go away), and what its limits still allow (null: no limit).
 */
public record NodePoolView(String name, int weight, Map<String, String> labels, List<Requirement> requirements,
    List<Taint> taints, Resources remaining) {

  /**
   * Whether the pool's requirements admit the type. As Karpenter intersects requirements, a requirement on a key the
   * type does not define (another provider's labels, a team's own key) does not rule it out: only keys both define
   * are compared.
   */
  public boolean allows(InstanceType type) {
    return requirements.stream().allMatch(r -> !type.labels().containsKey(r.getKey()) || r.matches(type.labels()));
  }
}
