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
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Karpenter's {@code NodeOverlay} ({@code karpenter.sh/v1alpha1}), with its field names and
 * meanings: the instance types its requirements select (in the NodePools they select) get its price
 * — absolute ({@code price}) or adjusted ({@code priceAdjustment}: {@code +10%}, {@code -0.5}) —
 * and its extended resources ({@code capacity}); the heavier overlay wins. Cluster-scoped; acted on
 * only with the {@code NodeOverlay} feature gate.
 */
@Group("karpenter.sh")
@Version("v1alpha1")
@Kind("NodeOverlay")
@Plural("nodeoverlays")
public class NodeOverlay extends CustomResource<NodeOverlay.Spec, NodeOverlay.Status> {

  /**
   * The order upstream applies overlays in ({@code OrderByWeight}): heavier first; of equal
   * weights, the name later in the alphabet first.
   */
  public static final Comparator<NodeOverlay> BY_WEIGHT =
      Comparator.comparingInt(NodeOverlay::weight)
          .reversed()
          .thenComparing((NodeOverlay o) -> o.getMetadata().getName(), Comparator.reverseOrder());

  /** {@code spec}. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Spec {
    /** Which instance types (and offerings) it applies to; well-known labels and pool labels. */
    public List<Requirement> requirements = new ArrayList<>();

    /** A signed change of price: {@code +10%}, {@code -15%}, {@code -0.5}, {@code +1.2}. */
    public String priceAdjustment;

    /** A price that replaces the instance type's: {@code 1.03}. */
    public String price;

    /** Extended resources the instance types gain (never cpu, memory, ephemeral-storage, pods). */
    public Map<String, Quantity> capacity;

    /** 1–10000; higher wins; none counts as 0. */
    public Integer weight;
  }

  /** {@code status}. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Status {
    public List<Condition> conditions = new ArrayList<>();
  }

  /** Its weight, 0 when it has none (as upstream's {@code lo.FromPtr}). */
  public int weight() {
    return getSpec() == null || getSpec().weight == null ? 0 : getSpec().weight;
  }

  @Override
  protected Spec initSpec() {
    return new Spec();
  }
}
