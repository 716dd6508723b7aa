package io.warmmetal.protocol.commands;

import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.Fields;
import io.warmmetal.protocol.MalformedFrame;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The kubelet settings a join passes to the kubelet ({@code KubeletSettings} in openapi.yaml): its
 * {@code maxPods}, and what it reserves for the system and for Kubernetes' own daemons — as a
 * Karpenter node class's {@code kubelet} says them, so the Node reports the allocatable its
 * NodePool was planned with. Each may be absent (the cluster's kubelet configuration stands).
 */
public record KubeletSettings(
    Integer maxPods, Map<String, String> systemReserved, Map<String, String> kubeReserved) {

  /**
   * The resources a kubelet reserves (its {@code --system-reserved} and {@code --kube-reserved}).
   */
  public static final Set<String> RESERVABLE = Set.of("cpu", "memory", "ephemeral-storage", "pid");

  /** A Kubernetes quantity, as upstream's node class validates a reservation. */
  private static final Pattern QUANTITY =
      Pattern.compile("^([+]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$");

  public KubeletSettings {
    if (maxPods != null && (maxPods < 1 || maxPods > 1000)) {
      throw new MalformedFrame("kubelet.maxPods must be 1 to 1000, not " + maxPods);
    }
    systemReserved = reserved("systemReserved", systemReserved);
    kubeReserved = reserved("kubeReserved", kubeReserved);
  }

  private static Map<String, String> reserved(String name, Map<String, String> reserved) {
    Map<String, String> checked = new TreeMap<>();
    if (reserved == null) {
      return Map.copyOf(checked);
    }
    reserved.forEach(
        (resource, amount) -> {
          if (!RESERVABLE.contains(resource)) {
            throw new MalformedFrame(
                "kubelet."
                    + name
                    + ": "
                    + resource
                    + " is not one of cpu, memory, ephemeral-storage, pid");
          }
          if (amount == null || !QUANTITY.matcher(amount).matches()) {
            throw new MalformedFrame(
                "kubelet." + name + "." + resource + ": '" + amount + "' is not a quantity");
          }
          checked.put(resource, amount);
        });
    return Map.copyOf(checked);
  }

  /** Whether it says nothing (no kubelet section is sent then). */
  public boolean isEmpty() {
    return maxPods == null && systemReserved.isEmpty() && kubeReserved.isEmpty();
  }

  public static KubeletSettings fromJson(JsonObject json) {
    long maxPods = Fields.number(json, "maxPods", 0);
    if (maxPods > Integer.MAX_VALUE) {
      throw new MalformedFrame("kubelet.maxPods must be 1 to 1000, not " + maxPods);
    }
    return new KubeletSettings(
        json.getValue("maxPods") == null ? null : (int) maxPods,
        Fields.strings(json, "systemReserved"),
        Fields.strings(json, "kubeReserved"));
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    if (maxPods != null) {
      json.put("maxPods", maxPods);
    }
    return json.put("systemReserved", Fields.toObject(systemReserved))
        .put("kubeReserved", Fields.toObject(kubeReserved));
  }
}
