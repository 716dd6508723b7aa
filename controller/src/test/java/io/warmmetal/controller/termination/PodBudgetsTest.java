package io.warmmetal.controller.termination;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PodBudgetsTest {

  private static Pod pod(String name, String app, boolean ready) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withUid(name)
        .withNamespace("default")
        .withLabels(Map.of("app", app))
        .endMetadata()
        .withNewStatus()
        .addNewCondition()
        .withType("Ready")
        .withStatus(ready ? "True" : "False")
        .endCondition()
        .endStatus()
        .build();
  }

  private static PodDisruptionBudget pdb(IntOrString min, IntOrString maxUnavailable) {
    return new PodDisruptionBudgetBuilder()
        .withNewMetadata()
        .withName("web")
        .withNamespace("default")
        .endMetadata()
        .withNewSpec()
        .withMinAvailable(min)
        .withMaxUnavailable(maxUnavailable)
        .withNewSelector()
        .withMatchLabels(Map.of("app", "web"))
        .endSelector()
        .endSpec()
        .build();
  }

  @Test
  void minAvailableLetsGoOnlyTheReadyPodsAboveIt() {
    List<Pod> pods =
        List.of(
            pod("w1", "web", true),
            pod("w2", "web", true),
            pod("w3", "web", false),
            pod("other", "db", true));
    PodBudgets budgets = PodBudgets.of(List.of(pdb(new IntOrString(1), null)), pods, Set.of());
    assertThat(budgets.allows(pods.get(0))).isTrue();
    budgets.evicted(pods.get(0));
    assertThat(budgets.allows(pods.get(1))).isFalse(); // one Ready pod left, and one must stay
    assertThat(budgets.blocking(pods.get(1))).containsExactly("default/web");
    assertThat(budgets.allows(pods.get(2)))
        .isTrue(); // not Ready: its going costs the budget nothing
    assertThat(budgets.allows(pods.get(3))).isTrue(); // not covered
  }

  @Test
  void maxUnavailableCountsPodsAlreadyDownAndRecentEvictions() {
    List<Pod> pods =
        List.of(
            pod("w1", "web", true),
            pod("w2", "web", true),
            pod("w3", "web", true),
            pod("w4", "web", false));
    // 50 % of 4 = 2 may be unavailable; one is not Ready and one was just evicted: none more.
    PodBudgets budgets =
        PodBudgets.of(List.of(pdb(null, new IntOrString("50%"))), pods, Set.of("w1"));
    assertThat(budgets.allows(pods.get(1))).isFalse();
    assertThat(
            PodBudgets.of(List.of(pdb(null, new IntOrString("50%"))), pods, Set.of())
                .allows(pods.get(1)))
        .isTrue();
  }
}
