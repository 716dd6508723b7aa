package io.warmmetal.controller.metrics;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.prometheus.client.Collector;
import io.prometheus.client.GaugeMetricFamily;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.state.PodRequests;
import io.warmmetal.controller.state.Pods;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Upstream's cluster-state gauges, computed from the informers' Nodes and pods as a pass saw them
 * (at most every {@link #EVERY}) and served as they were then: each Node's allocatable, its pods'
 * and DaemonSets' requests and limits, its system overhead and age ({@code karpenter_nodes_*},
 * labelled with its well-known labels), each pod's state ({@code karpenter_pods_state}), how long
 * pending pods have waited, and the cluster's utilization. Names, labels and values as upstream's
 * {@code pkg/controllers/metrics/node} and {@code pod} have them (CPU in cores, the rest in units;
 * {@code resource_type} the resource's name, lower case, {@code -} as {@code _}).
 */
final class ClusterMetrics extends Collector {
  static final Duration EVERY = Duration.ofSeconds(5);

  /** Upstream's well-known node labels, each as the metric label it becomes. */
  static final Map<String, String> NODE_LABELS = new LinkedHashMap<>();

  static {
    NODE_LABELS.put(WellKnown.NODEPOOL_LABEL, "nodepool");
    NODE_LABELS.put(WellKnown.ZONE_LABEL, "zone");
    NODE_LABELS.put(WellKnown.REGION_LABEL, "region");
    NODE_LABELS.put(WellKnown.INSTANCE_TYPE_LABEL, "instance_type");
    NODE_LABELS.put(WellKnown.ARCH_LABEL, "arch");
    NODE_LABELS.put(WellKnown.OS_LABEL, "os");
    NODE_LABELS.put(WellKnown.CAPACITY_TYPE_LABEL, "capacity_type");
    NODE_LABELS.put("node.kubernetes.io/windows-build", "windows_build");
  }

  private static final List<String> POD_LABELS =
      List.of(
          "name",
          "namespace",
          "owner",
          "node",
          "scheduled",
          "nodepool",
          "zone",
          "arch",
          "capacity_type",
          "instance_type",
          "phase",
          "ready",
          "managed");

  private final Clock clock;
  private volatile List<MetricFamilySamples> last = List.of();
  private volatile Instant observedAt = Instant.EPOCH;

  ClusterMetrics(Clock clock) {
    this.clock = clock;
  }

  @Override
  public List<MetricFamilySamples> collect() {
    return last;
  }

  /** Takes the cluster in, unless it was taken in less than {@link #EVERY} ago. */
  void observe(List<Node> nodes, List<Pod> pods) {
    Instant now = clock.instant();
    if (observedAt.plus(EVERY).isAfter(now)) {
      return;
    }
    observedAt = now;
    last = samples(nodes, pods, now);
  }

  private static List<MetricFamilySamples> samples(List<Node> nodes, List<Pod> pods, Instant now) {
    List<String> nodeLabelNames = new ArrayList<>(NODE_LABELS.values());
    nodeLabelNames.addAll(List.of("node_name", "phase", "managed"));
    List<String> byResource = new ArrayList<>(nodeLabelNames);
    byResource.add("resource_type");
    GaugeMetricFamily allocatable =
        new GaugeMetricFamily(
            "karpenter_nodes_allocatable",
            "Node allocatable are the resources allocatable by nodes.",
            byResource);
    GaugeMetricFamily podRequests =
        new GaugeMetricFamily(
            "karpenter_nodes_total_pod_requests",
            "Node total pod requests are the resources requested by pods bound to nodes, including"
                + " the DaemonSet pods.",
            byResource);
    GaugeMetricFamily podLimits =
        new GaugeMetricFamily(
            "karpenter_nodes_total_pod_limits",
            "Node total pod limits are the resources specified by pod limits, including the"
                + " DaemonSet pods.",
            byResource);
    GaugeMetricFamily daemonRequests =
        new GaugeMetricFamily(
            "karpenter_nodes_total_daemon_requests",
            "Node total daemon requests are the resource requested by DaemonSet pods bound to"
                + " nodes.",
            byResource);
    GaugeMetricFamily daemonLimits =
        new GaugeMetricFamily(
            "karpenter_nodes_total_daemon_limits",
            "Node total daemon limits are the resources specified by DaemonSet pod limits.",
            byResource);
    GaugeMetricFamily overhead =
        new GaugeMetricFamily(
            "karpenter_nodes_system_overhead",
            "Node system daemon overhead are the resources reserved for system overhead, the"
                + " difference between the node's capacity and allocatable values are reported by"
                + " the status.",
            byResource);
    GaugeMetricFamily lifetime =
        new GaugeMetricFamily(
            "karpenter_nodes_current_lifetime_seconds", "Node age in seconds", nodeLabelNames);

    Map<String, Resources[]> byNode = new HashMap<>(); // requests, limits, daemon ones
    for (Pod pod : pods) {
      String nodeName = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
      if (nodeName == null || Pods.finished(pod)) {
        continue;
      }
      Resources[] sums =
          byNode.computeIfAbsent(
              nodeName,
              n ->
                  new Resources[] {Resources.NONE, Resources.NONE, Resources.NONE, Resources.NONE});
      Resources requests = PodRequests.effectiveRequests(pod);
      Resources limits = PodRequests.limits(pod);
      sums[0] = sums[0].plus(requests);
      sums[1] = sums[1].plus(limits);
      if (Pods.daemonOrMirror(pod)) {
        sums[2] = sums[2].plus(requests);
        sums[3] = sums[3].plus(limits);
      }
    }
    Map<String, Node> nodesByName = new HashMap<>();
    Resources allocatableSum = Resources.NONE;
    Resources requestedSum = Resources.NONE;
    for (Node node : nodes) {
      String name = node.getMetadata().getName();
      nodesByName.put(name, node);
      List<String> labels = nodeLabels(node);
      Map<String, Quantity> nodeAllocatable = status(node, true);
      Resources[] sums = byNode.get(name);
      add(allocatable, labels, PodRequests.of(nodeAllocatable));
      add(
          overhead,
          labels,
          PodRequests.of(status(node, false)).minus(PodRequests.of(nodeAllocatable)));
      if (sums != null) {
        add(podRequests, labels, sums[0]);
        add(podLimits, labels, sums[1]);
        add(daemonRequests, labels, sums[2]);
        add(daemonLimits, labels, sums[3]);
        requestedSum = requestedSum.plus(sums[0]);
      }
      allocatableSum = allocatableSum.plus(PodRequests.of(nodeAllocatable));
      String created = node.getMetadata().getCreationTimestamp();
      if (created != null) {
        lifetime.addMetric(
            labels, Duration.between(Instant.parse(created), now).toMillis() / 1000.0);
      }
    }

    GaugeMetricFamily state =
        new GaugeMetricFamily(
            "karpenter_pods_state",
            "Pod state is the current state of pods. This metric can be used several ways as it"
                + " is labeled by the pod name, namespace, owner, node, nodepool name, zone,"
                + " architecture, capacity type, instance type, pod phase, and pod readiness.",
            POD_LABELS);
    GaugeMetricFamily unbound =
        new GaugeMetricFamily(
            "karpenter_pods_unbound_time_seconds",
            "The time from pod creation until the pod is bound.",
            List.of("name", "namespace"));
    GaugeMetricFamily unstarted =
        new GaugeMetricFamily(
            "karpenter_pods_unstarted_time_seconds",
            "The time from pod creation until the pod is running.",
            List.of("name", "namespace"));
    for (Pod pod : pods) {
      String nodeName = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
      Node node = nodeName == null ? null : nodesByName.get(nodeName);
      Map<String, String> nodeLabels =
          node == null || node.getMetadata().getLabels() == null
              ? Map.of()
              : node.getMetadata().getLabels();
      String phase = pod.getStatus() == null ? "" : str(pod.getStatus().getPhase());
      state.addMetric(
          List.of(
              pod.getMetadata().getName(),
              str(pod.getMetadata().getNamespace()),
              owner(pod),
              str(nodeName),
              String.valueOf(nodeName != null),
              str(nodeLabels.get(WellKnown.NODEPOOL_LABEL)),
              str(nodeLabels.get(WellKnown.ZONE_LABEL)),
              str(nodeLabels.get(WellKnown.ARCH_LABEL)),
              str(nodeLabels.get(WellKnown.CAPACITY_TYPE_LABEL)),
              str(nodeLabels.get(WellKnown.INSTANCE_TYPE_LABEL)),
              phase,
              String.valueOf(ready(pod)),
              String.valueOf(nodeLabels.containsKey(WellKnown.NODEPOOL_LABEL))),
          1);
      String created = pod.getMetadata().getCreationTimestamp();
      if (created != null && !Pods.finished(pod)) {
        double waited = Duration.between(Instant.parse(created), now).toMillis() / 1000.0;
        List<String> who =
            List.of(pod.getMetadata().getName(), str(pod.getMetadata().getNamespace()));
        if (nodeName == null) {
          unbound.addMetric(who, waited);
        }
        if (!"Running".equals(phase)) {
          unstarted.addMetric(who, waited);
        }
      }
    }

    GaugeMetricFamily utilization =
        new GaugeMetricFamily(
            "karpenter_cluster_utilization_percent",
            "Utilization of allocatable resources by pod requests",
            List.of("resource_type"));
    Map<String, Double> requestedAmounts = amounts(requestedSum);
    for (Map.Entry<String, Double> e : amounts(allocatableSum).entrySet()) {
      Double requested = requestedAmounts.get(e.getKey());
      if (e.getValue() > 0) {
        utilization.addMetric(
            List.of(e.getKey()), 100 * (requested == null ? 0 : requested) / e.getValue());
      }
    }
    return List.of(
        allocatable,
        podRequests,
        podLimits,
        daemonRequests,
        daemonLimits,
        overhead,
        lifetime,
        state,
        unbound,
        unstarted,
        utilization);
  }

  private static Map<String, Quantity> status(Node node, boolean allocatable) {
    if (node.getStatus() == null) {
      return Map.of();
    }
    Map<String, Quantity> values =
        allocatable ? node.getStatus().getAllocatable() : node.getStatus().getCapacity();
    return values == null ? Map.of() : values;
  }

  /** The Node's well-known labels, its name, phase and whether Karpenter (we) manage it. */
  private static List<String> nodeLabels(Node node) {
    Map<String, String> labels =
        node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
    List<String> values = new ArrayList<>();
    NODE_LABELS.keySet().forEach(key -> values.add(str(labels.get(key))));
    values.add(node.getMetadata().getName());
    values.add(node.getStatus() == null ? "" : str(node.getStatus().getPhase()));
    values.add(String.valueOf(labels.containsKey(WellKnown.NODEPOOL_LABEL)));
    return values;
  }

  private static void add(GaugeMetricFamily family, List<String> labels, Resources resources) {
    amounts(resources)
        .forEach(
            (type, value) -> {
              List<String> withType = new ArrayList<>(labels);
              withType.add(type);
              family.addMetric(withType, value);
            });
  }

  /** CPU in cores, the rest as they are; each under its resource_type. */
  private static Map<String, Double> amounts(Resources resources) {
    Map<String, Double> amounts = new LinkedHashMap<>();
    amounts.put("cpu", resources.cpuMilli() / 1000.0);
    amounts.put("memory", (double) resources.memoryBytes());
    resources
        .extended()
        .forEach(
            (name, value) ->
                amounts.put(
                    name.toLowerCase(Locale.ROOT).replace('-', '_').replace('/', '_'),
                    (double) value));
    return amounts;
  }

  /** The pod's owner as upstream names it: its controller's kind and name. */
  private static String owner(Pod pod) {
    List<OwnerReference> owners = pod.getMetadata().getOwnerReferences();
    if (owners == null || owners.isEmpty()) {
      return "";
    }
    OwnerReference owner =
        owners.stream()
            .filter(o -> Boolean.TRUE.equals(o.getController()))
            .findFirst()
            .orElse(owners.get(0));
    return owner.getKind() + "/" + owner.getName();
  }

  private static boolean ready(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return false;
    }
    for (PodCondition c : pod.getStatus().getConditions()) {
      if ("Ready".equals(c.getType())) {
        return "True".equals(c.getStatus());
      }
    }
    return false;
  }

  private static String str(String value) {
    return value == null ? "" : value;
  }
}
