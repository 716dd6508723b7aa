package io.warmmetal.controller.buffers;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Namespaced;
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
 * SIG Autoscaling's {@code CapacityBuffer} ({@code autoscaling.x-k8s.io/v1beta1}, as Cluster
 * Autoscaler and Karpenter serve it; {@code v1alpha1} is the same schema): spare capacity for pods
 * shaped like a PodTemplate or a workload's template, so many of them ({@code replicas}, a {@code
 * percentage} of the workload's replicas, as many as fit in {@code limits}). Namespaced.
 */
@Group("autoscaling.x-k8s.io")
@Version("v1beta1")
@Kind("CapacityBuffer")
@Plural("capacitybuffers")
public class CapacityBuffer extends CustomResource<CapacityBuffer.Spec, CapacityBuffer.Status>
    implements Namespaced {

  /** Upstream's default strategy: the buffer's virtual pods drive provisioning as pending pods. */
  public static final String ACTIVE_CAPACITY = "buffer.x-k8s.io/active-capacity";

  /**
   * Reserved for WarmMetal's pre-joined standby (nodes joined ahead of time, waiting for their
   * identity): not implemented yet, so a buffer asking for it is left alone, as any strategy this
   * controller does not know.
   */
  public static final String PRE_JOINED = "warmmetal.io/pre-joined";

  /** Set by the buffer controller: the pod template is resolved and the replicas computed. */
  public static final String READY_FOR_PROVISIONING = "ReadyForProvisioning";

  /** Set by provisioning: whether the buffer's virtual pods fit the capacity there is. */
  public static final String PROVISIONING = "Provisioning";

  /** {@code spec}. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Spec {
    /** Defaulted by the API server to {@link #ACTIVE_CAPACITY}. */
    public String provisioningStrategy;

    /** A PodTemplate in the buffer's namespace: one chunk of the buffer. */
    public LocalObjectRef podTemplateRef;

    /** A workload (with a scale subresource) whose pods are the chunks. */
    public ScalableRef scalableRef;

    public Integer replicas;

    /** Of the scalable's replicas, rounded up (at least 1 when both are positive). */
    public Integer percentage;

    /** Caps on the buffer's total requests: at most as many chunks as fit. */
    public Map<String, Quantity> limits;
  }

  /** {@code {name}}: an object in the buffer's namespace. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class LocalObjectRef {
    public String name;

    public LocalObjectRef() {}

    public LocalObjectRef(String name) {
      this.name = name;
    }
  }

  /** {@code spec.scalableRef}: an object of a kind with a scale subresource. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class ScalableRef {
    /** Empty for the core group. */
    public String apiGroup;

    public String kind;
    public String name;
  }

  /** {@code status}, as the buffer controller and provisioning write it. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Status {
    public LocalObjectRef podTemplateRef;
    public Integer replicas;
    public Long podTemplateGeneration;
    public List<Condition> conditions = new ArrayList<>();
    public String provisioningStrategy;
  }

  @Override
  protected Spec initSpec() {
    return new Spec();
  }

  /** {@code namespace/name}. */
  public String key() {
    return getMetadata().getNamespace() + "/" + getMetadata().getName();
  }
}
