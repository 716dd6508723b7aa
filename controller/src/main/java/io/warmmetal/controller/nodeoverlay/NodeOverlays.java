package io.warmmetal.controller.nodeoverlay;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeOverlay;
import io.warmmetal.controller.karpenter.NodeOverlayValidation;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.scheduling.InstanceType;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Upstream's NodeOverlay controller: evaluates every NodeOverlay against every NodePool's instance
 * types — heaviest first, each either valid and applied whole or not at all — writes each overlay's
 * {@code ValidationSucceeded} (False with {@code RuntimeValidation} when invalid, {@code Conflict}
 * when an overlay of the same weight already changed the same offering's price or the same
 * resource) and {@code Ready}, and then hands the result to the {@link InstanceTypeStore} the
 * planners read. A NodePool whose instance types cannot be read is left unevaluated (and waits);
 * the others are evaluated.
 */
public final class NodeOverlays {
  private static final Logger LOG = LoggerFactory.getLogger(NodeOverlays.class);

  /** The reason of a {@code ValidationSucceeded=False} for an invalid overlay. */
  public static final String RUNTIME_VALIDATION = "RuntimeValidation";

  /** The reason of a {@code ValidationSucceeded=False} for an overlay in conflict. */
  public static final String CONFLICT = "Conflict";

  private static final List<String> READY_ON = List.of(Conditions.VALIDATION_SUCCEEDED);

  /** A NodePool's instance types as its node class offers them. */
  @FunctionalInterface
  public interface PoolTypes {
    List<InstanceType> of(NodePool pool) throws Exception;
  }

  /** How an evaluation ended. */
  public enum Outcome {
    /** The store holds it. */
    EVALUATED,
    /** An overlay changed (or went) while its status was written: evaluate again. */
    AGAIN
  }

  private final KubernetesClient kube;
  private final Supplier<List<NodeOverlay>> overlays;
  private final Supplier<List<NodePool>> pools;
  private final PoolTypes types;
  private final InstanceTypeStore store;

  /**
   * @param overlays the NodeOverlays (an informer's)
   * @param pools the NodePools whose instance types they may change (this controller's)
   */
  public NodeOverlays(
      KubernetesClient kube,
      Supplier<List<NodeOverlay>> overlays,
      Supplier<List<NodePool>> pools,
      PoolTypes types,
      InstanceTypeStore store) {
    this.kube = kube;
    this.overlays = overlays;
    this.pools = pools;
    this.types = types;
    this.store = store;
  }

  /**
   * Evaluates the overlays, writes their status, updates the store.
   *
   * @throws NodePoolsFailed after updating the store, when some NodePools' instance types could not
   *     be read (those wait; upstream's multierr)
   */
  public Outcome reconcile() throws NodePoolsFailed {
    Map<String, List<InstanceType>> typesByPool = new LinkedHashMap<>();
    List<NodePool> evaluated = new ArrayList<>();
    List<String> failures = new ArrayList<>();
    for (NodePool pool : pools.get()) {
      try {
        typesByPool.put(pool.getMetadata().getName(), types.of(pool));
        evaluated.add(pool);
      } catch (Exception e) {
        // One broken NodePool (its node class missing, say) keeps no overlay off the others.
        failures.add(
            "listing instance types for nodepool \""
                + pool.getMetadata().getName()
                + "\", "
                + e.getMessage());
      }
    }
    List<NodeOverlay> ordered = new ArrayList<>(overlays.get());
    ordered.sort(NodeOverlay.BY_WEIGHT);
    Updates updates = new Updates();
    Map<String, String> invalid = new LinkedHashMap<>();
    Set<String> conflicting = new HashSet<>();
    for (NodeOverlay overlay : ordered) {
      List<String> problems = NodeOverlayValidation.problems(overlay);
      if (!problems.isEmpty()) {
        invalid.put(overlay.getMetadata().getName(), String.join("; ", problems));
      } else if (!applyWhole(updates, evaluated, typesByPool, overlay)) {
        conflicting.add(overlay.getMetadata().getName());
      }
    }
    evaluated.forEach(p -> updates.evaluated.add(p.getMetadata().getName()));
    if (!writeStatuses(ordered, invalid, conflicting)) {
      return Outcome.AGAIN;
    }
    store.update(updates);
    if (!failures.isEmpty()) {
      throw new NodePoolsFailed(String.join("; ", failures));
    }
    return Outcome.EVALUATED;
  }

  /** Some NodePools' instance types could not be read: they wait for the next evaluation. */
  public static final class NodePoolsFailed extends Exception {
    NodePoolsFailed(String message) {
      super(message);
    }
  }

  /**
   * Applies the overlay to every NodePool's instance types it selects, or — when it conflicts with
   * an overlay of its weight in any of them — to none: never in part.
   */
  private static boolean applyWhole(
      Updates updates,
      List<NodePool> pools,
      Map<String, List<InstanceType>> typesByPool,
      NodeOverlay overlay) {
    LabelRequirements selects = LabelRequirements.of(overlay.getSpec().requirements);
    Map<String, Long> capacity = capacity(overlay);
    for (NodePool pool : pools) {
      String name = pool.getMetadata().getName();
      for (InstanceType type : typesByPool.get(name)) {
        List<InstanceType.Offering> offerings = offerings(pool, type, selects);
        if (!offerings.isEmpty()
            && (updates.priceConflicts(name, type.name(), offerings, overlay)
                || updates.capacityConflicts(name, type.name(), overlay))) {
          return false;
        }
      }
    }
    for (NodePool pool : pools) {
      String name = pool.getMetadata().getName();
      for (InstanceType type : typesByPool.get(name)) {
        List<InstanceType.Offering> offerings = offerings(pool, type, selects);
        if (!offerings.isEmpty()) {
          updates.price(name, type.name(), offerings, overlay);
          updates.capacity(name, type.name(), overlay, capacity);
        }
      }
    }
    return true;
  }

  /**
   * The type's offerings the overlay selects in the pool (upstream's {@code getOverlaidOfferings}):
   * none unless the type — with its pool's name and template labels, which its nodes get — is
   * compatible with the overlay's requirements; then those whose zone (and capacity type) they
   * admit. An overlay that selects none of its offerings leaves the type alone, capacity too.
   */
  static List<InstanceType.Offering> offerings(
      NodePool pool, InstanceType type, LabelRequirements selects) {
    Map<String, String> templateLabels =
        pool.getSpec().template.metadata == null ? null : pool.getSpec().template.metadata.labels;
    Set<String> zones = new HashSet<>();
    Set<String> regions = new HashSet<>();
    for (InstanceType.Offering o : type.offerings()) {
      if (o.zone() != null) {
        zones.add(o.zone());
      }
      if (o.region() != null) {
        regions.add(o.region());
      }
    }
    LabelRequirements typeRequirements =
        new LabelRequirements()
            .addIn(WellKnown.NODEPOOL_LABEL, Set.of(pool.getMetadata().getName()))
            .addLabels(templateLabels == null ? Map.of() : templateLabels)
            .addLabels(type.labels())
            .addIn(WellKnown.ZONE_LABEL, zones)
            .addIn(WellKnown.REGION_LABEL, regions);
    if (!typeRequirements.compatible(selects, Set.of())) {
      return List.of();
    }
    return type.offerings().stream()
        .filter(
            o ->
                selects.compatible(
                    offeringRequirements(type, o), NodeOverlayValidation.WELL_KNOWN_LABELS))
        .toList();
  }

  /** Where an offering's machines are, and their capacity type (WarmMetal's: the type's). */
  private static LabelRequirements offeringRequirements(
      InstanceType type, InstanceType.Offering offering) {
    Map<String, String> labels = new TreeMap<>();
    String capacityType = type.labels().get(WellKnown.CAPACITY_TYPE_LABEL);
    if (capacityType != null) {
      labels.put(WellKnown.CAPACITY_TYPE_LABEL, capacityType);
    }
    if (offering.zone() != null) {
      labels.put(WellKnown.ZONE_LABEL, offering.zone());
    }
    if (offering.region() != null) {
      labels.put(WellKnown.REGION_LABEL, offering.region());
    }
    return new LabelRequirements().addLabels(labels);
  }

  /** The overlay's extended resources as the scheduler counts them (bytes, units). */
  static Map<String, Long> capacity(NodeOverlay overlay) {
    Map<String, Long> capacity = new TreeMap<>();
    if (overlay.getSpec().capacity != null) {
      overlay
          .getSpec()
          .capacity
          .forEach((name, q) -> capacity.put(name, Quantity.getAmountInBytes(q).longValue()));
    }
    return capacity;
  }

  /**
   * Each overlay's {@code ValidationSucceeded} and {@code Ready}, patched on its status where they
   * changed, at the version read (as upstream's optimistic lock). False when an overlay changed or
   * went meanwhile: the evaluation is stale.
   *
   * @throws KubernetesClientException a status could not be written (the others were): the
   *     evaluation is not used
   */
  private boolean writeStatuses(
      List<NodeOverlay> ordered, Map<String, String> invalid, Set<String> conflicting) {
    KubernetesClientException failed = null;
    for (NodeOverlay overlay : ordered) {
      String name = overlay.getMetadata().getName();
      List<Condition> conditions = new ArrayList<>();
      if (overlay.getStatus() != null && overlay.getStatus().conditions != null) {
        overlay
            .getStatus()
            .conditions
            .forEach(c -> conditions.add(new ConditionBuilder(c).build()));
      }
      boolean changed;
      if (invalid.containsKey(name)) {
        changed =
            Conditions.set(
                conditions,
                Conditions.VALIDATION_SUCCEEDED,
                false,
                RUNTIME_VALIDATION,
                invalid.get(name));
      } else if (conflicting.contains(name)) {
        changed =
            Conditions.set(
                conditions,
                Conditions.VALIDATION_SUCCEEDED,
                false,
                CONFLICT,
                "conflict with another overlay");
      } else {
        changed =
            Conditions.set(
                conditions,
                Conditions.VALIDATION_SUCCEEDED,
                true,
                Conditions.VALIDATION_SUCCEEDED,
                "");
      }
      changed |= Conditions.setReady(conditions, READY_ON);
      if (!changed) {
        continue;
      }
      Map<String, Object> metadata = new TreeMap<>();
      metadata.put("resourceVersion", overlay.getMetadata().getResourceVersion());
      try {
        kube.resources(NodeOverlay.class)
            .withName(name)
            .subresource("status")
            .patch(
                PatchContext.of(PatchType.JSON_MERGE),
                Serialization.asJson(
                    Map.of("metadata", metadata, "status", Map.of("conditions", conditions))));
      } catch (KubernetesClientException e) {
        if (e.getCode() == 409 || e.getCode() == 404) {
          LOG.debug("NodeOverlay {} changed while its status was written: again", name);
          return false;
        }
        failed = failed == null ? e : failed;
      }
    }
    if (failed != null) {
      throw failed;
    }
    return true;
  }
}
