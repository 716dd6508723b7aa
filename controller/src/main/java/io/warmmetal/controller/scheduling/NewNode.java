package io.warmmetal.controller.scheduling;

import java.util.List;
import java.util.Map;

/**
 * A new node of the plan, upstream's NodeClaim: not one type but every type that would hold its
 * pods, best first ({@code options}), narrowed as pods join it; its type, labels and free resources
 * are those of its best option.
 */
final class NewNode extends OpenNode {
  /** Its possible types, best first. */
  List<InstanceType> options;

  /** Labels chosen for it: its zone and region, values of its pool's keys its first pod wanted. */
  final Map<String, String> where;

  private final Catalog catalog;

  /** Its labels as each of its options. */
  private final Catalog.LabelsWhere labelsAs;

  private Resources requested = Resources.NONE;

  /** The most any option has room for: a quick no. */
  private Resources roomiest;

  private PodRequest askedFor;
  private List<InstanceType> answer;

  /** In the plan: its machine counted as taken. */
  private boolean joined;

  /** A new node that may become any of {@code options}. */
  NewNode(
      String id,
      NodePoolView pool,
      List<InstanceType> options,
      Map<String, String> where,
      Catalog catalog) {
    super(id, pool, pool.taints());
    this.where = where;
    this.catalog = catalog;
    labelsAs = catalog.labels(pool, where);
    narrow(options);
    findDaemonPorts();
  }

  boolean joined() {
    return joined;
  }

  /** Joins the plan: its machine counted as taken. */
  void join() {
    joined = true;
    catalog.take(null, type);
  }

  private void narrow(List<InstanceType> still) {
    options = still;
    if (joined && type != still.get(0)) {
      catalog.take(type, still.get(0)); // grown into another type: its machine instead
    }
    type = still.get(0);
    labels = Catalog.withWhere(catalog.option(pool, type).labels(), where); // its own: kept
    free = catalog.option(pool, type).usable().minus(requested);
    roomiest = Resources.NONE;
    for (InstanceType o : still) {
      roomiest = roomiest.max(catalog.option(pool, o).usable());
    }
  }

  /** The options that would still hold the node's pods and this one, and that it accepts. */
  private List<InstanceType> optionsWith(PodRequest pod) {
    if (pod != askedFor) {
      Resources all = requested.plus(pod.requests());
      answer =
          options.stream()
              .filter(
                  o ->
                      (o == type || catalog.machineLeft(o))
                          && catalog.option(pool, o).usable().fits(all)
                          && pod.accepts(labelsAs.of(o)))
              .toList();
      askedFor = pod;
    }
    return answer;
  }

  @Override
  boolean hasRoomFor(PodRequest pod) {
    return roomiest.fits(requested, pod.requests()) && !optionsWith(pod).isEmpty();
  }

  @Override
  void makeRoom(PodRequest pod, PodRequest as) {
    List<InstanceType> still = optionsWith(as);
    requested = requested.plus(pod.requests());
    narrow(still);
  }
}
