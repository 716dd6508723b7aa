package io.warmmetal.controller.karpenter;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * {@code nodeClassRef}: the provider's node class a NodePool's nodes use (here a {@code
 * WarmMetalNodeClass}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class NodeClassReference {
  public String group;
  public String kind;
  public String name;
}
