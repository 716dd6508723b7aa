package io.warmmetal.controller.provisioning;

import io.fabric8.kubernetes.api.model.Pod;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Scheduler;
import java.util.Map;

/**
 * Told of each provisioning plan: the pending pods it was made for and where it put them (capacity
 * buffers read from it whether their virtual pods fit the capacity there is).
 */
@FunctionalInterface
public interface PlanListener {
  PlanListener NONE = (pending, plan) -> {};

  void planned(Map<PodRequest, Pod> pending, Scheduler.Plan plan);
}
