package io.warmmetal.controller.nodeoverlay;

import io.warmmetal.controller.karpenter.NodeOverlay;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.TypeOverlay;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the NodeOverlays change, per NodePool and instance type (upstream's {@code
 * internalInstanceTypeStore}): a price change per offering, extended resources added, each with the
 * weight of the lightest overlay that reached it — overlays come heaviest first, so an overlay of
 * the same weight reaching the same offering or resource again is a conflict — and the NodePools
 * evaluated. Built by one evaluation, then only read.
 */
final class Updates {
  /** An offering's price change: an absolute price or a signed adjustment. */
  static final class PriceUpdate {
    final String change;
    int lowestWeight;

    PriceUpdate(String change, int lowestWeight) {
      this.change = change;
      this.lowestWeight = lowestWeight;
    }
  }

  /** Extended resources added, and those of the lightest overlay that added any. */
  static final class CapacityUpdate {
    final Map<String, Long> added = new TreeMap<>();
    Set<String> lowestWeightResources = Set.of();
    int lowestWeight;
  }

  /** One instance type's changes in one NodePool: prices by offering, and capacity. */
  static final class TypeUpdate {
    final Map<String, PriceUpdate> prices = new TreeMap<>();
    CapacityUpdate capacity;
  }

  /** NodePool → instance type → its changes. */
  final Map<String, Map<String, TypeUpdate>> updates = new HashMap<>();

  /** The NodePools this evaluation looked at: any other waits for the next. */
  final Set<String> evaluated = new HashSet<>();

  /** The key an offering's price change is kept under: where its machines are. */
  static String offeringKey(InstanceType.Offering offering) {
    return "zone="
        + Objects.toString(offering.zone(), "")
        + ",region="
        + Objects.toString(offering.region(), "");
  }

  private TypeUpdate typeUpdate(String pool, String type) {
    return updates
        .computeIfAbsent(pool, p -> new HashMap<>())
        .computeIfAbsent(type, t -> new TypeUpdate());
  }

  private TypeUpdate existing(String pool, String type) {
    return updates.getOrDefault(pool, Map.of()).get(type);
  }

  /** Whether the overlay would price one of these offerings an overlay of its weight priced. */
  boolean priceConflicts(
      String pool, String type, List<InstanceType.Offering> offerings, NodeOverlay overlay) {
    if (overlay.getSpec().price == null && overlay.getSpec().priceAdjustment == null) {
      return false;
    }
    TypeUpdate update = existing(pool, type);
    if (update == null) {
      return false;
    }
    return offerings.stream()
        .map(o -> update.prices.get(offeringKey(o)))
        .anyMatch(p -> p != null && p.lowestWeight == overlay.weight());
  }

  /**
   * Whether the overlay would add a resource the lightest overlay that added any, of its weight,
   * added too.
   */
  boolean capacityConflicts(String pool, String type, NodeOverlay overlay) {
    if (overlay.getSpec().capacity == null) {
      return false;
    }
    TypeUpdate update = existing(pool, type);
    if (update == null
        || update.capacity == null
        || update.capacity.lowestWeight != overlay.weight()) {
      return false;
    }
    return overlay.getSpec().capacity.keySet().stream()
        .anyMatch(update.capacity.lowestWeightResources::contains);
  }

  /**
   * The overlay's price for these offerings, where no heavier overlay set one (a lighter overlay's
   * reach is still remembered, for the conflicts of those after it). Conflicts are checked first.
   */
  void price(String pool, String type, List<InstanceType.Offering> offerings, NodeOverlay overlay) {
    String change =
        overlay.getSpec().price != null
            ? overlay.getSpec().price
            : overlay.getSpec().priceAdjustment;
    if (change == null) {
      return;
    }
    TypeUpdate update = typeUpdate(pool, type);
    for (InstanceType.Offering o : offerings) {
      PriceUpdate existing = update.prices.get(offeringKey(o));
      if (existing != null) {
        existing.lowestWeight = overlay.weight();
      } else {
        update.prices.put(offeringKey(o), new PriceUpdate(change, overlay.weight()));
      }
    }
  }

  /** The overlay's extended resources, where no heavier overlay added them. */
  void capacity(String pool, String type, NodeOverlay overlay, Map<String, Long> resources) {
    if (overlay.getSpec().capacity == null) {
      return;
    }
    TypeUpdate update = typeUpdate(pool, type);
    if (update.capacity == null) {
      update.capacity = new CapacityUpdate();
    }
    resources.forEach(update.capacity.added::putIfAbsent);
    update.capacity.lowestWeightResources = Set.copyOf(resources.keySet());
    update.capacity.lowestWeight = overlay.weight();
  }

  /**
   * How the overlays change one NodePool's instance types, as a fixed value (its text says what it
   * changes, so a change of overlays is seen as one); {@link TypeOverlay#NONE} when they change
   * none.
   */
  TypeOverlay of(String pool) {
    Map<String, TypeUpdate> byType = updates.get(pool);
    if (byType == null || byType.isEmpty()) {
      return TypeOverlay.NONE;
    }
    Map<String, Changes> changes = new TreeMap<>();
    byType.forEach(
        (type, update) -> {
          Map<String, String> prices = new TreeMap<>();
          update.prices.forEach((offering, p) -> prices.put(offering, p.change));
          Map<String, Long> capacity =
              update.capacity == null ? Map.of() : new TreeMap<>(update.capacity.added);
          if (!prices.isEmpty() || !capacity.isEmpty()) {
            changes.put(type, new Changes(prices, capacity));
          }
        });
    return changes.isEmpty() ? TypeOverlay.NONE : new PoolOverlay(changes);
  }

  /** One type's changes: price changes by offering, extended resources added. */
  record Changes(Map<String, String> prices, Map<String, Long> capacity) {}

  /** A NodePool's overlays applied to its instance types. */
  record PoolOverlay(Map<String, Changes> byType) implements TypeOverlay {
    @Override
    public InstanceType apply(InstanceType type) {
      Changes changes = byType.get(type.name());
      if (changes == null) {
        return type;
      }
      InstanceType changed =
          changes.capacity().isEmpty() ? type : type.withCapacity(changes.capacity());
      if (changes.prices().isEmpty()
          || type.offerings().stream()
              .noneMatch(o -> changes.prices().containsKey(offeringKey(o)))) {
        return changed;
      }
      // Offerings it does not price keep their price: the type's price becomes its cheapest.
      return changed.withOfferings(
          type.offerings().stream()
              .map(
                  o -> {
                    String change = changes.prices().get(offeringKey(o));
                    return change == null
                        ? o.pricedAt(type.priceOf(o), o.priceOverlaid())
                        : o.pricedAt(adjusted(type.priceOf(o), change), true);
                  })
              .toList());
    }
  }

  /**
   * The price a change makes of a price, as upstream's {@code AdjustedPrice}: unsigned, a price of
   * its own; signed with {@code %}, that much more or less; signed, that much added — never below
   * 0.
   */
  static double adjusted(double price, String change) {
    if (change == null || change.isEmpty()) {
      return price;
    }
    if (!change.startsWith("+") && !change.startsWith("-")) {
      return Double.parseDouble(change);
    }
    double result =
        change.endsWith("%")
            ? price * (1 + Double.parseDouble(change.substring(0, change.length() - 1)) / 100)
            : price + Double.parseDouble(change);
    return result >= 0 ? result : 0;
  }
}
