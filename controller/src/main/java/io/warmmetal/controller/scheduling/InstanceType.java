package io.warmmetal.controller.scheduling;

import java.util.List;
import java.util.Map;

/**
 * A shape of the fleet as the scheduler sees it: its labels (instance type, arch, capacity type,
 * WarmMetal's cpu/memory/gpu labels), what a node of it can allocate, its price, how many machines
 * of it are warm now, and its offerings — where its machines are (zone and region) and how many can
 * be had there now.
 */
public record InstanceType(
    String name,
    Map<String, String> labels,
    Resources allocatable,
    double price,
    int warm,
    List<Offering> offerings) {

  public InstanceType(
      String name, Map<String, String> labels, Resources allocatable, double price, int warm) {
    this(name, labels, allocatable, price, warm, List.of());
  }

  /**
   * Machines of the type in one zone (and region; either may be unknown): how many can be had now,
   * how many warm.
   */
  public record Offering(String zone, String region, int available, int warm) {}

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
}
