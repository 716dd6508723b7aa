package io.warmmetal.controller.state;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PreferredSchedulingTerm;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.WeightedPodAffinityTerm;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.scheduling.HostPort;
import io.warmmetal.controller.scheduling.Placement;
import io.warmmetal.controller.scheduling.PodAffinityTerm;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.scheduling.SpreadConstraint;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Pods as the scheduler sees them. */
public final class PodRequests {
  /** The resource a node's pod count is: every pod takes one. */
  public static final String PODS = "pods";

  private PodRequests() {}

  /** A pod kube-scheduler could not place: not bound, and marked Unschedulable. */
  public static boolean unschedulable(Pod pod) {
    if (pod.getSpec() == null
        || pod.getSpec().getNodeName() != null
        || pod.getStatus() == null
        || pod.getMetadata().getDeletionTimestamp() != null) {
      return false;
    }
    for (PodCondition c : pod.getStatus().getConditions()) {
      if ("PodScheduled".equals(c.getType())
          && "False".equals(c.getStatus())
          && "Unschedulable".equals(c.getReason())) {
        return true;
      }
    }
    return false;
  }

  public static PodRequest of(Pod pod) {
    Resources requests = effectiveRequests(pod);
    List<List<Requirement>> terms = new ArrayList<>();
    var affinity = pod.getSpec().getAffinity();
    if (affinity != null
        && affinity.getNodeAffinity() != null
        && affinity.getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution() != null) {
      for (NodeSelectorTerm term :
          affinity
              .getNodeAffinity()
              .getRequiredDuringSchedulingIgnoredDuringExecution()
              .getNodeSelectorTerms()) {
        terms.add(requirements(term));
      }
    }
    return new PodRequest(
        pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName(),
        requests,
        normalized(pod.getSpec().getNodeSelector()),
        terms,
        pod.getSpec().getTolerations() == null ? List.of() : pod.getSpec().getTolerations(),
        hostPorts(pod),
        pod.getMetadata().getNamespace(),
        pod.getMetadata().getLabels() == null ? Map.of() : pod.getMetadata().getLabels(),
        antiAffinity(pod),
        placement(pod));
  }

  /** The pod a DaemonSet would run on a node: its template's, in its namespace. */
  public static PodRequest daemon(DaemonSet daemonSet) {
    var template = daemonSet.getSpec().getTemplate();
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName(daemonSet.getMetadata().getName())
            .withNamespace(daemonSet.getMetadata().getNamespace())
            .withLabels(template.getMetadata() == null ? null : template.getMetadata().getLabels())
            .endMetadata()
            .withSpec(template.getSpec())
            .build();
    return of(pod);
  }

  /**
   * Its pod affinity, topology spread and preferences. Preferred terms go heaviest first
   * (relaxation drops the heaviest first, as upstream); a spread constraint's {@code
   * matchLabelKeys} add the pod's own values to its selector, as the API server does.
   */
  static Placement placement(Pod pod) {
    var affinity = pod.getSpec().getAffinity();
    List<PodAffinityTerm> required = List.of();
    List<PodAffinityTerm> preferred = List.of();
    List<PodAffinityTerm> preferredAnti = List.of();
    List<List<Requirement>> preferredNode = List.of();
    if (affinity != null && affinity.getPodAffinity() != null) {
      required =
          terms(pod, affinity.getPodAffinity().getRequiredDuringSchedulingIgnoredDuringExecution());
      preferred =
          terms(
              pod,
              heaviestFirst(
                  affinity.getPodAffinity().getPreferredDuringSchedulingIgnoredDuringExecution()));
    }
    if (affinity != null && affinity.getPodAntiAffinity() != null) {
      preferredAnti =
          terms(
              pod,
              heaviestFirst(
                  affinity
                      .getPodAntiAffinity()
                      .getPreferredDuringSchedulingIgnoredDuringExecution()));
    }
    if (affinity != null
        && affinity.getNodeAffinity() != null
        && affinity.getNodeAffinity().getPreferredDuringSchedulingIgnoredDuringExecution()
            != null) {
      List<PreferredSchedulingTerm> terms =
          new ArrayList<>(
              affinity.getNodeAffinity().getPreferredDuringSchedulingIgnoredDuringExecution());
      terms.sort(
          Comparator.comparing(
                  (PreferredSchedulingTerm t) -> t.getWeight() == null ? 0 : t.getWeight())
              .reversed());
      preferredNode = terms.stream().map(t -> requirements(t.getPreference())).toList();
    }
    List<SpreadConstraint> spread = new ArrayList<>();
    if (pod.getSpec().getTopologySpreadConstraints() != null) {
      for (var c : pod.getSpec().getTopologySpreadConstraints()) {
        var selector = withOwnValues(c.getLabelSelector(), c.getMatchLabelKeys(), pod);
        spread.add(
            new SpreadConstraint(
                new PodAffinityTerm(
                    selector, Set.of(pod.getMetadata().getNamespace()), c.getTopologyKey()),
                c.getMaxSkew() == null ? 1 : c.getMaxSkew(),
                c.getMinDomains(),
                !"ScheduleAnyway".equals(c.getWhenUnsatisfiable()),
                !"Ignore".equals(c.getNodeAffinityPolicy()),
                "Honor".equals(c.getNodeTaintsPolicy())));
      }
    }
    if (required.isEmpty()
        && preferred.isEmpty()
        && preferredAnti.isEmpty()
        && preferredNode.isEmpty()
        && spread.isEmpty()) {
      return Placement.NONE;
    }
    return new Placement(required, preferred, preferredAnti, preferredNode, spread);
  }

  private static List<io.fabric8.kubernetes.api.model.PodAffinityTerm> heaviestFirst(
      List<WeightedPodAffinityTerm> weighted) {
    if (weighted == null) {
      return List.of();
    }
    List<WeightedPodAffinityTerm> sorted = new ArrayList<>(weighted);
    sorted.sort(
        Comparator.comparing(
                (WeightedPodAffinityTerm t) -> t.getWeight() == null ? 0 : t.getWeight())
            .reversed());
    return sorted.stream().map(WeightedPodAffinityTerm::getPodAffinityTerm).toList();
  }

  /** The selector with {@code key In [the pod's value]} for each of {@code keys} the pod has. */
  private static LabelSelector withOwnValues(LabelSelector selector, List<String> keys, Pod pod) {
    if (selector == null
        || keys == null
        || keys.isEmpty()
        || pod.getMetadata().getLabels() == null) {
      return selector;
    }
    var more = new LabelSelectorBuilder(selector);
    for (String key : keys) {
      String value = pod.getMetadata().getLabels().get(key);
      if (value != null) {
        more.addNewMatchExpression()
            .withKey(key)
            .withOperator("In")
            .withValues(value)
            .endMatchExpression();
      }
    }
    return more.build();
  }

  /**
   * What the pod needs of a node, as Kubernetes computes it: its containers' requests together with
   * its restartable init containers (sidecars, which run alongside them), or — if more — the
   * largest init container with the sidecars started before it — or its pod-level cpu and memory,
   * where it says them; plus the pod's overhead (its RuntimeClass's).
   */
  public static Resources effectiveRequests(Pod pod) {
    Resources running = Resources.NONE;
    for (Container c : pod.getSpec().getContainers()) {
      running = running.plus(requestsOf(c));
    }
    Resources sidecars = Resources.NONE;
    Resources initPeak = Resources.NONE;
    if (pod.getSpec().getInitContainers() != null) {
      for (Container c : pod.getSpec().getInitContainers()) {
        Resources own = requestsOf(c);
        Resources whileItRuns;
        if ("Always".equals(c.getRestartPolicy())) {
          running = running.plus(own);
          sidecars = sidecars.plus(own);
          whileItRuns = sidecars;
        } else {
          whileItRuns = own.plus(sidecars);
        }
        initPeak = initPeak.max(whileItRuns);
      }
    }
    Resources requests = running.max(initPeak);
    // Pod-level resources (Kubernetes 1.32+): where the pod says its cpu or memory, that is its
    // request for it, whatever its containers say.
    var podLevel = pod.getSpec().getResources();
    if (podLevel != null && podLevel.getRequests() != null) {
      Resources own = of(podLevel.getRequests());
      requests =
          new Resources(
              podLevel.getRequests().containsKey("cpu") ? own.cpuMilli() : requests.cpuMilli(),
              podLevel.getRequests().containsKey("memory")
                  ? own.memoryBytes()
                  : requests.memoryBytes(),
              requests.extended());
    }
    if (pod.getSpec().getOverhead() != null) {
      requests = requests.plus(of(pod.getSpec().getOverhead()));
    }
    return requests.with(PODS, 1); // one of the node's pods
  }

  /** What the pod's containers may use at most (their limits, summed; init containers aside). */
  public static Resources limits(Pod pod) {
    Resources limits = Resources.NONE;
    for (Container c : pod.getSpec().getContainers()) {
      if (c.getResources() != null && c.getResources().getLimits() != null) {
        limits = limits.plus(of(c.getResources().getLimits()));
      }
    }
    return limits;
  }

  /**
   * Its required pod anti-affinity terms. The namespaces a term means: those it names, else —
   * without a namespace selector — the pod's own; a namespace selector (whose namespaces' labels
   * the controller does not watch) counts as every namespace, which keeps pods apart rather than
   * together.
   */
  static List<PodAffinityTerm> antiAffinity(Pod pod) {
    var affinity = pod.getSpec().getAffinity();
    if (affinity == null || affinity.getPodAntiAffinity() == null) {
      return List.of();
    }
    return terms(
        pod, affinity.getPodAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution());
  }

  private static List<PodAffinityTerm> terms(
      Pod pod, List<io.fabric8.kubernetes.api.model.PodAffinityTerm> given) {
    if (given == null || given.isEmpty()) {
      return List.of();
    }
    List<PodAffinityTerm> terms = new ArrayList<>();
    for (var t : given) {
      Set<String> namespaces;
      if (t.getNamespaces() != null && !t.getNamespaces().isEmpty()) {
        namespaces = Set.copyOf(t.getNamespaces());
      } else if (t.getNamespaceSelector() != null) {
        namespaces = null;
      } else {
        namespaces = Set.of(pod.getMetadata().getNamespace());
      }
      terms.add(
          new PodAffinityTerm(
              withOwnValues(t.getLabelSelector(), t.getMatchLabelKeys(), pod),
              namespaces,
              t.getTopologyKey()));
    }
    return terms;
  }

  private static List<Requirement> requirements(NodeSelectorTerm term) {
    List<Requirement> all = new ArrayList<>();
    if (term != null && term.getMatchExpressions() != null) {
      for (NodeSelectorRequirement r : term.getMatchExpressions()) {
        all.add(new Requirement(normalized(r.getKey()), r.getOperator(), r.getValues()));
      }
    }
    return all;
  }

  /**
   * The well-known key an alias stands for (beta arch, os, instance type, zone, region), as
   * upstream reads them.
   */
  private static String normalized(String key) {
    return WellKnown.NORMALIZED.getOrDefault(key, key);
  }

  private static Map<String, String> normalized(Map<String, String> selector) {
    if (selector == null) {
      return Map.of();
    }
    Map<String, String> out = new HashMap<>();
    selector.forEach((k, v) -> out.put(normalized(k), v));
    return out;
  }

  /** The host ports its containers (and sidecars, which run alongside) bind. */
  static List<HostPort> hostPorts(Pod pod) {
    List<HostPort> ports = new ArrayList<>();
    List<Container> running = new ArrayList<>(pod.getSpec().getContainers());
    if (pod.getSpec().getInitContainers() != null) {
      pod.getSpec().getInitContainers().stream()
          .filter(c -> "Always".equals(c.getRestartPolicy()))
          .forEach(running::add);
    }
    for (Container c : running) {
      if (c.getPorts() != null) {
        c.getPorts().stream()
            .filter(p -> p.getHostPort() != null && p.getHostPort() > 0)
            .forEach(p -> ports.add(new HostPort(p.getHostIP(), p.getProtocol(), p.getHostPort())));
      }
    }
    return ports;
  }

  private static Resources requestsOf(Container c) {
    return c.getResources() == null || c.getResources().getRequests() == null
        ? Resources.NONE
        : of(c.getResources().getRequests());
  }

  /** cpu → millicores, memory → bytes, anything else → units. */
  public static Resources of(Map<String, Quantity> quantities) {
    Resources r = Resources.NONE;
    for (Map.Entry<String, Quantity> e : quantities.entrySet()) {
      BigDecimal amount = Quantity.getAmountInBytes(e.getValue());
      r =
          switch (e.getKey()) {
            case "cpu" ->
                r.plus(Resources.of(amount.multiply(BigDecimal.valueOf(1000)).longValue(), 0));
            case "memory" -> r.plus(Resources.of(0, amount.longValue()));
            default -> r.with(e.getKey(), amount.longValue());
          };
    }
    return r;
  }
}
