package io.warmmetal.controller.karpenter;

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
 * Karpenter's {@code NodeClaim} ({@code karpenter.sh/v1}): one node asked of the provider. Its
 * status carries the providerID, capacity, allocatable and the Launched, Registered and Initialized
 * conditions. Cluster-scoped.
 */
@Group("karpenter.sh")
@Version("v1")
@Kind("NodeClaim")
@Plural("nodeclaims")
public class NodeClaim extends CustomResource<NodeClaim.Spec, NodeClaim.Status> {

  /** {@code spec}: the template's spec plus the resources the pods that triggered it request. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Spec extends NodeClaimTemplate.Spec {
    public Resources resources = new Resources();
  }

  /** {@code spec.resources}. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Resources {
    public Map<String, Quantity> requests;
  }

  /** {@code status}. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Status {
    public String nodeName;
    public String providerID;
    public String imageID;
    public Map<String, Quantity> capacity;
    public Map<String, Quantity> allocatable;
    public List<Condition> conditions = new ArrayList<>();
    public String lastPodEventTime;
  }

  @Override
  protected Spec initSpec() {
    return new Spec();
  }
}
