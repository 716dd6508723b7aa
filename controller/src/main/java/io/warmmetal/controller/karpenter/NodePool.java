package io.warmmetal.controller.karpenter;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Version;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Karpenter's {@code NodePool} ({@code karpenter.sh/v1}), with its field names and meanings, so a
 * NodePool written for Karpenter applies unchanged but for its {@code nodeClassRef}.
 * Cluster-scoped.
 */
@Group("karpenter.sh")
@Version("v1")
@Kind("NodePool")
@Plural("nodepools")
public class NodePool extends CustomResource<NodePool.Spec, NodePool.Status> {

  /** {@code spec}. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Spec {
    public NodeClaimTemplate template = new NodeClaimTemplate();
    public Disruption disruption;

    /** Caps on the pool's total resources, e.g. {@code cpu: 1000}. */
    public Map<String, Quantity> limits;

    /** Higher weights are tried first. */
    public Integer weight;

    /** A static NodePool: this many nodes, whatever the pods (upstream's static provisioning). */
    public Long replicas;
  }

  /** {@code spec.disruption}. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Disruption {
    /** {@code WhenEmpty}, {@code WhenEmptyOrUnderutilized} or {@code Balanced}. */
    public String consolidationPolicy;

    /** A duration, or {@code Never}. */
    public String consolidateAfter;

    public List<Budget> budgets = new ArrayList<>();
  }

  /**
   * A disruption budget: at most {@code nodes} (a count or a percentage) at once, optionally in a
   * cron window.
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Budget {
    public String nodes;
    public String schedule;
    public String duration;
    public List<String> reasons;
  }

  /** {@code status}. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Status {
    /** What its nodes have, summed (cpu, memory, pods, …; and {@code nodes}). */
    public Map<String, Quantity> resources;

    /** How many nodes it has. */
    public Long nodes;

    public Long nodeClassObservedGeneration;
    public List<Condition> conditions = new ArrayList<>();
  }

  /** A static NodePool: {@code replicas} nodes whatever the pods. */
  @JsonIgnore
  public boolean isStatic() {
    return getSpec() != null && getSpec().replicas != null;
  }

  @Override
  protected Spec initSpec() {
    return new Spec();
  }
}
