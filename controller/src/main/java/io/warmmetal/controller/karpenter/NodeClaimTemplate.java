package io.warmmetal.controller.karpenter;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Taint;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A NodePool's {@code spec.template}: the metadata and spec of the NodeClaims it creates. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class NodeClaimTemplate {
  public Metadata metadata = new Metadata();
  public Spec spec = new Spec();

  /** Labels and annotations every node of the pool gets. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Metadata {
    public Map<String, String> labels;
    public Map<String, String> annotations;
  }

  /** What the template and a NodeClaim share. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Spec {
    public NodeClassReference nodeClassRef;
    public List<Taint> taints = new ArrayList<>();
    public List<Taint> startupTaints = new ArrayList<>();
    public List<Requirement> requirements = new ArrayList<>();

    /** A duration such as {@code 720h}, or {@code Never}. */
    public String expireAfter;

    public String terminationGracePeriod;
  }
}
