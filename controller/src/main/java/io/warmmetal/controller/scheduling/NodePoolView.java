package io.warmmetal.controller.scheduling;

import io.fabric8.kubernetes.api.model.Taint;
import io.warmmetal.controller.karpenter.Requirement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A NodePool as the scheduler sees it: its weight, the labels its nodes get, its requirements, its
 * taints (startup taints do not count: they go away), what its limits still allow (null: no limit;
 * {@code nodes} counts nodes), and its DaemonSets' pods (those that would land on one of its nodes
 * count against it), whether it is static (a fixed number of nodes: pods go onto them, but make it
 * launch none), and how its NodeOverlays change the instance types its nodes may be of.
 */
public record NodePoolView(
    String name,
    int weight,
    Map<String, String> labels,
    List<Requirement> requirements,
    List<Taint> taints,
    Resources remaining,
    List<PodRequest> daemons,
    boolean fixed,
    TypeOverlay overlay) {
  /**
   * How a DaemonSet's pod is judged: its required terms only, and PreferNoSchedule taints do not
   * keep it off.
   */
  private static final Placement AS_DAEMON = Placement.NONE.toleratingPreferNoSchedule();

  public NodePoolView(
      String name,
      int weight,
      Map<String, String> labels,
      List<Requirement> requirements,
      List<Taint> taints,
      Resources remaining) {
    this(name, weight, labels, requirements, taints, remaining, List.of());
  }

  public NodePoolView(
      String name,
      int weight,
      Map<String, String> labels,
      List<Requirement> requirements,
      List<Taint> taints,
      Resources remaining,
      List<PodRequest> daemons) {
    this(name, weight, labels, requirements, taints, remaining, daemons, false, TypeOverlay.NONE);
  }

  /**
   * Whether the pool's requirements admit the type. As Karpenter intersects requirements, a
   * requirement on a key the type does not define (another provider's labels, a team's own key)
   * does not rule it out: only keys both define are compared.
   */
  public boolean allows(InstanceType type) {
    return requirements.stream()
        .allMatch(r -> !type.labels().containsKey(r.getKey()) || r.matches(type.labels()));
  }

  /**
   * Labels a new node of the pool takes for the pod: for each requirement {@code In} several values
   * on a key that is not a label of the pool's nodes already (a team's key, say) nor one the node's
   * type or machine decides ({@code decided}), the first value the pod's selector and affinity ask
   * for — as upstream narrows a NodeClaim's requirements by its pods'. Empty when the pod asks for
   * none; null when it asks for a value the pool does not offer.
   */
  public Map<String, String> choices(PodRequest pod, Set<String> decided) {
    Map<String, String> chosen = null;
    for (Requirement r : requirements) {
      if (!"In".equals(r.getOperator())
          || r.getValues().size() < 2
          || labels.containsKey(r.getKey())
          || decided.contains(r.getKey())
          || !pod.mentions(Set.of(r.getKey()))) {
        continue;
      }
      String value =
          r.getValues().stream().filter(v -> pod.admits(r.getKey(), v)).findFirst().orElse(null);
      if (value == null) {
        return null;
      }
      chosen = chosen == null ? new HashMap<>() : chosen;
      chosen.put(r.getKey(), value);
    }
    return chosen == null ? Map.of() : chosen;
  }

  /**
   * What the DaemonSets that would run on a node with these labels request: they tolerate its
   * taints and select it.
   */
  public Resources daemonOverhead(Map<String, String> nodeLabels) {
    Resources sum = Resources.NONE;
    for (PodRequest daemon : daemons) {
      // Its required terms only: a DaemonSet pod's preferences do not keep it off a node.
      PodRequest asDaemon = daemon.withPlacement(AS_DAEMON);
      if (asDaemon.tolerates(taints) && asDaemon.accepts(nodeLabels)) {
        sum = sum.plus(daemon.requests());
      }
    }
    return sum;
  }

  public boolean hasMinValues() {
    return requirements.stream().anyMatch(r -> r.getMinValues() != null);
  }

  /** The host ports the DaemonSets that would run on a node with these labels bind there. */
  public List<HostPort> daemonPorts(Map<String, String> nodeLabels) {
    return daemons.stream()
        .map(d -> d.withPlacement(AS_DAEMON))
        .filter(d -> d.tolerates(taints) && d.accepts(nodeLabels))
        .flatMap(d -> d.hostPorts().stream())
        .toList();
  }

  /**
   * Whether the types a node could be of offer as many kinds as each requirement's {@code
   * minValues} asks (distinct values of its key), as upstream's flexibility guard: a pool that asks
   * for five instance types to choose from is not served by one. As with requirements, a key the
   * types do not define is not held against them.
   */
  public boolean minValuesMet(List<InstanceType> candidates) {
    for (Requirement r : requirements) {
      if (r.getMinValues() == null) {
        continue;
      }
      Set<String> values = new HashSet<>();
      candidates.stream()
          .map(t -> t.labels().get(r.getKey()))
          .filter(v -> v != null)
          .forEach(values::add);
      if (!values.isEmpty()
          && values.size() < r.getMinValues()) { // a key no type defines rules nothing out
        return false;
      }
    }
    return true;
  }
}
