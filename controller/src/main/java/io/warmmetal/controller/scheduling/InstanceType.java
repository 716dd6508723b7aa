package io.warmmetal.controller.scheduling;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A shape of the fleet as the scheduler sees it: its labels (instance type, arch, capacity type,
 * WarmMetal's cpu/memory/gpu labels), what a node of it can allocate, its price, how many machines
 * of it are warm now, and its offerings — where its machines are (zone and region) and how many can
 * be had there now. A NodeOverlay may give offerings prices of their own (the type's price is then
 * its cheapest offering's) and add extended resources ({@code capacityOverlaid}).
 */
public record InstanceType(
    String name,
    Map<String, String> labels,
    Resources allocatable,
    double price,
    int warm,
    List<Offering> offerings,
    boolean capacityOverlaid) {

  public InstanceType(
      String name,
      Map<String, String> labels,
      Resources allocatable,
      double price,
      int warm,
      List<Offering> offerings) {
    this(name, labels, allocatable, price, warm, offerings, false);
  }

  public InstanceType(
      String name, Map<String, String> labels, Resources allocatable, double price, int warm) {
    this(name, labels, allocatable, price, warm, List.of());
  }

  /**
   * Machines of the type in one zone (and region; either may be unknown): how many can be had now,
   * how many warm; its price when it differs from the type's (the fleet prices a shape, not a zone:
   * only a NodeOverlay sets one), and whether a NodeOverlay set it.
   */
  public record Offering(
      String zone, String region, int available, int warm, Double price, boolean priceOverlaid) {
    public Offering(String zone, String region, int available, int warm) {
      this(zone, region, available, warm, null, false);
    }

    /** The same machines at another price, set by a NodeOverlay or not. */
    public Offering pricedAt(double newPrice, boolean overlaid) {
      return new Offering(zone, region, available, warm, newPrice, overlaid);
    }
  }

  /**
   * How many machines of the type can be had now (by its offerings; without them, as many as
   * wanted).
   */
  public int available() {
    return offerings.isEmpty()
        ? Integer.MAX_VALUE
        : offerings.stream().mapToInt(Offering::available).sum();
  }

  /** The zones with a machine of this type to be had now. */
  public List<Offering> availableOfferings() {
    return offerings.stream().filter(o -> o.zone() != null && o.available() > 0).toList();
  }

  /** What a machine of the offering costs. */
  public double priceOf(Offering offering) {
    return offering.price() == null ? price : offering.price();
  }

  /** Whether a NodeOverlay priced one of its offerings (upstream's IsPricingOverlayApplied). */
  public boolean priceOverlaid() {
    return offerings.stream().anyMatch(Offering::priceOverlaid);
  }

  /**
   * The type with these offerings, priced as upstream orders types: by the cheapest offering with a
   * machine to be had (of all of them when none has).
   */
  public InstanceType withOfferings(List<Offering> priced) {
    List<Offering> from =
        priced.stream().anyMatch(o -> o.available() > 0)
            ? priced.stream().filter(o -> o.available() > 0).toList()
            : priced;
    double cheapest = from.stream().mapToDouble(this::priceOf).min().orElse(price);
    return new InstanceType(name, labels, allocatable, cheapest, warm, priced, capacityOverlaid);
  }

  /** The type with extended resources a NodeOverlay adds (or replaces). */
  public InstanceType withCapacity(Map<String, Long> extended) {
    Map<String, Long> more = new HashMap<>(allocatable.extended());
    more.putAll(extended);
    return new InstanceType(
        name,
        labels,
        new Resources(allocatable.cpuMilli(), allocatable.memoryBytes(), more),
        price,
        warm,
        offerings,
        true);
  }

  /**
   * The type as a node in that zone pays for it: its offering's price there, when a NodeOverlay
   * gave that one a price of its own.
   */
  public InstanceType pricedIn(String zone) {
    for (Offering o : offerings) {
      if (o.price() != null && Objects.equals(o.zone(), zone) && o.price() != price) {
        return new InstanceType(
            name, labels, allocatable, o.price(), warm, offerings, capacityOverlaid);
      }
    }
    return this;
  }
}
