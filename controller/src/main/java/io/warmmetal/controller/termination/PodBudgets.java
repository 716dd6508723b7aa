package io.warmmetal.controller.termination;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.warmmetal.controller.scheduling.LabelSelectors;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How many more pods each PodDisruptionBudget lets go in this pass: its pods that are Ready, less
 * what it must keep ({@code minAvailable}, or the pods less {@code maxUnavailable}); every eviction
 * this pass counts down. The API server's Eviction API stays the authority (it refuses with 429);
 * this keeps the controller from asking for what it would refuse, and keeps budgets honoured where
 * the Eviction API does not check them.
 */
public final class PodBudgets {
  private final Map<PodDisruptionBudget, Integer> allowed = new HashMap<>();

  /**
   * @param evicted pods evicted lately that may not show as terminating yet: they count as gone
   */
  public static PodBudgets of(List<PodDisruptionBudget> pdbs, List<Pod> pods, Set<String> evicted) {
    PodBudgets budgets = new PodBudgets();
    for (PodDisruptionBudget pdb : pdbs) {
      List<Pod> covered = pods.stream().filter(p -> selects(pdb, p)).toList();
      int expected = covered.size();
      int healthy =
          (int)
              covered.stream()
                  .filter(p -> ready(p) && !evicted.contains(p.getMetadata().getUid()))
                  .count();
      var spec = pdb.getSpec();
      int allowed;
      if (spec.getMinAvailable() != null) {
        allowed = healthy - scaled(spec.getMinAvailable(), expected);
      } else if (spec.getMaxUnavailable() != null) {
        allowed = scaled(spec.getMaxUnavailable(), expected) - (expected - healthy);
      } else {
        allowed = healthy;
      }
      budgets.allowed.put(pdb, allowed);
    }
    return budgets;
  }

  /**
   * Whether the budget covering the pod lets one more go. A pod two budgets cover never goes (the
   * Eviction API refuses it, and upstream does not try). A pod that is not Ready costs no budget
   * (its absence is already counted; the Eviction API lets it go too, unless the budget's
   * unhealthyPodEvictionPolicy says otherwise — then the API server's 429 decides).
   */
  public boolean allows(Pod pod) {
    List<Integer> covering =
        allowed.entrySet().stream()
            .filter(e -> selects(e.getKey(), pod))
            .map(Map.Entry::getValue)
            .toList();
    return covering.size() <= 1 && (!ready(pod) || covering.stream().allMatch(n -> n > 0));
  }

  /** The budgets that stopped the pod, for the log (all that cover it, if more than one). */
  public List<String> blocking(Pod pod) {
    long covering = allowed.keySet().stream().filter(pdb -> selects(pdb, pod)).count();
    return allowed.entrySet().stream()
        .filter(e -> selects(e.getKey(), pod) && (e.getValue() <= 0 || covering > 1))
        .map(
            e -> e.getKey().getMetadata().getNamespace() + "/" + e.getKey().getMetadata().getName())
        .toList();
  }

  /** How many budgets cover the pod. */
  public long covering(Pod pod) {
    return allowed.keySet().stream().filter(pdb -> selects(pdb, pod)).count();
  }

  void evicted(Pod pod) {
    if (ready(pod)) {
      allowed.replaceAll((pdb, n) -> selects(pdb, pod) ? n - 1 : n);
    }
  }

  private static boolean selects(PodDisruptionBudget pdb, Pod pod) {
    return pdb.getMetadata().getNamespace().equals(pod.getMetadata().getNamespace())
        && pod.getMetadata().getDeletionTimestamp() == null
        && matches(
            pdb.getSpec().getSelector(),
            pod.getMetadata().getLabels() == null ? Map.of() : pod.getMetadata().getLabels());
  }

  static boolean matches(LabelSelector selector, Map<String, String> labels) {
    return LabelSelectors.matches(selector, labels); // policy/v1: null selects none
  }

  private static boolean ready(Pod pod) {
    return pod.getStatus() != null
        && pod.getStatus().getConditions() != null
        && pod.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /** A count, or a percentage of {@code total} rounded up, as Kubernetes scales PDB values. */
  static int scaled(IntOrString value, int total) {
    if (value.getIntVal() != null) {
      return value.getIntVal();
    }
    String s = value.getStrVal().trim();
    if (s.endsWith("%")) {
      return (int) Math.ceil(Integer.parseInt(s.substring(0, s.length() - 1)) * total / 100.0);
    }
    return Integer.parseInt(s);
  }
}
