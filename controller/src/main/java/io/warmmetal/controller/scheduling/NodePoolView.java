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

  public boolean allows(InstanceType type) {
    return requirements.stream().allMatch(r -> r.matches(type.labels()));
  }
}
