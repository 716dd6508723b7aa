package io.warmmetal.controller.instances;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Quantity;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.state.InstanceTypes;
import io.warmmetal.controller.state.PodRequests;
import io.warmmetal.protocol.MalformedFrame;
import io.warmmetal.protocol.commands.KubeletSettings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The fleet's shapes (from {@code GET /v1/shapes}) as instance types with Karpenter's well-known
 * labels.
 */
final class ShapeTypes {
  private static final long GIB = 1L << 30;

  private ShapeTypes() {}

  /**
   * The shapes a launch can have a machine of: warm ones, ones being prepared, pre-joined ones (a
   * launch takes those without a join — if they stand by for this cluster and project; else it is
   * answered InsufficientCapacity, and the shape rests a while), or (with {@code standby}) ones in
   * standby (a launch may take those; its node then comes when the machine is switched on and
   * prepared). In-use machines do not count.
   */
  static Set<String> available(JsonNode shapes, boolean standby) {
    Set<String> names = new HashSet<>();
    for (JsonNode s : shapes) {
      if (takeable(s.path("counts"), standby) > 0) {
        names.add(s.get("name").asText());
      }
    }
    return names;
  }

  /** Machines a launch can take of these counts by state. */
  private static int takeable(JsonNode counts, boolean standby) {
    return counts.path("warm").asInt(0)
        + counts.path("preparing").asInt(0)
        + counts.path("pre-joined").asInt(0)
        + (standby ? counts.path("standby").asInt(0) : 0);
  }

  /**
   * What the node class's kubelet reserves for the system and for Kubernetes (its {@code
   * systemReserved} and {@code kubeReserved}, summed): a node's allocatable is its capacity less
   * this, as the kubelet will report it. A value that is no quantity reserves nothing here (the
   * launch refuses the node class, saying why).
   */
  static Resources reserved(WarmMetalNodeClass nodeClass) {
    KubeletSettings kubelet;
    try {
      kubelet = nodeClass == null ? null : Joins.kubelet(nodeClass);
    } catch (MalformedFrame e) {
      return Resources.NONE;
    }
    if (kubelet == null) {
      return Resources.NONE;
    }
    Map<String, Quantity> reserved = new HashMap<>();
    for (Map<String, String> amounts : List.of(kubelet.systemReserved(), kubelet.kubeReserved())) {
      amounts.forEach(
          (resource, amount) -> {
            if (!"pid".equals(resource)) {
              reserved.merge(resource, new Quantity(amount), Quantity::add);
            }
          });
    }
    try {
      return PodRequests.of(reserved);
    } catch (IllegalArgumentException | ArithmeticException notAQuantity) {
      return Resources.NONE;
    }
  }

  /** The kubelet's default pods per node, as upstream assumes without a node class setting. */
  static final int DEFAULT_MAX_PODS = 110;

  /**
   * The shapes as instance types; a node's {@code pods} is the node class's {@code kubelet.maxPods}
   * (default 110), and each counts one against a NodePool's {@code nodes} limit.
   */
  static List<InstanceType> of(JsonNode shapes, WarmMetalNodeClass nodeClass) {
    Resources reserved = reserved(nodeClass);
    int maxPods =
        nodeClass == null
                || nodeClass.getSpec().kubelet == null
                || nodeClass.getSpec().kubelet.maxPods == null
            ? DEFAULT_MAX_PODS
            : nodeClass.getSpec().kubelet.maxPods;
    List<InstanceType> types = new ArrayList<>();
    for (JsonNode s : shapes) {
      String name = s.get("name").asText();
      int cpus = s.get("cpus").asInt();
      long memGiB = s.get("memoryGiB").asLong();
      int gpus = 0;
      String gpuModel = null;
      for (JsonNode g : s.get("gpus")) {
        gpus += g.get("count").asInt();
        gpuModel = g.get("model").asText();
      }
      Map<String, String> labels = new HashMap<>();
      labels.put(WellKnown.INSTANCE_TYPE_LABEL, name);
      labels.put(WellKnown.ARCH_LABEL, "arm".equals(s.get("arch").asText()) ? "arm64" : "amd64");
      labels.put(WellKnown.OS_LABEL, "linux");
      labels.put(WellKnown.CAPACITY_TYPE_LABEL, "on-demand");
      labels.put("warmmetal.io/cpu", String.valueOf(cpus));
      labels.put("warmmetal.io/memory-gib", String.valueOf(memGiB));
      labels.put("warmmetal.io/gpu-count", String.valueOf(gpus));
      if (gpuModel != null) {
        labels.put("warmmetal.io/gpu-model", gpuModel);
      }
      Resources allocatable =
          Resources.of(cpus * 1000L, memGiB * GIB)
              .with(PodRequests.PODS, maxPods)
              .with(InstanceTypes.NODES, 1)
              .minus(Resources.of(reserved.cpuMilli(), reserved.memoryBytes()));
      if (gpus > 0) {
        allocatable = allocatable.with("nvidia.com/gpu", gpus);
      }
      if (s.hasNonNull("diskGiB")) {
        // Its smallest machine's disks, less the kubelet's default 10 % nodefs eviction threshold.
        // A shape whose
        // machines report no disks offers none: pods asking for ephemeral storage do not get it
        // (nor hugepages,
        // which no fact reports): an unfit shape, not a pod that waits for ever on a node without
        // them.
        allocatable =
            allocatable.with(
                InstanceTypes.EPHEMERAL_STORAGE,
                s.get("diskGiB").asLong() * GIB / 10 * 9
                    - reserved.extended().getOrDefault(InstanceTypes.EPHEMERAL_STORAGE, 0L));
      }
      double price =
          s.hasNonNull("pricePerHour")
              ? s.get("pricePerHour").asDouble()
              : cpus * 0.03
                  + memGiB * 0.004
                  + gpus * 2.0; // a stand-in proportional to size until an operator sets one
      List<InstanceType.Offering> offerings = new ArrayList<>();
      boolean standby = nodeClass != null && nodeClass.getSpec().launchesFromStandby();
      for (JsonNode o : s.path("offerings")) {
        JsonNode counts = o.path("counts");
        int available = takeable(counts, standby);
        offerings.add(
            new InstanceType.Offering(
                o.path("zone").isTextual() ? o.get("zone").asText() : null,
                o.path("region").isTextual() ? o.get("region").asText() : null,
                available,
                counts.path("warm").asInt(0)));
      }
      types.add(
          new InstanceType(
              name,
              labels,
              allocatable,
              price,
              s.path("counts").path("warm").asInt(0),
              List.copyOf(offerings)));
    }
    return types;
  }
}
