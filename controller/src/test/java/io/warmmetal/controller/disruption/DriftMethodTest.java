package io.warmmetal.controller.disruption;

import static io.warmmetal.controller.disruption.TestCluster.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The drift method over a fixed cluster (types: small, 4 CPU at 1.0; large, 8 CPU at 1.5): a
 * drifted node is deleted where its pods fit elsewhere, else replaced at any price; one at a time,
 * within budgets; the next is tried when a replacement cannot be launched; a PodDisruptionBudget
 * holds it back unless the claim has a terminationGracePeriod.
 */
class DriftMethodTest {
  private final TestCluster cluster = new TestCluster();
  private final DriftMethod drift = new DriftMethod();
  private final List<Command> offered = new ArrayList<>();

  private NodeClaim drifted(String name) {
    NodeClaim claim = cluster.node(name, cluster.large);
    Conditions.set(
        claim.getStatus().conditions,
        Conditions.DRIFTED,
        true,
        "NodePoolDrifted",
        "NodePoolDrifted");
    return claim;
  }

  /** The commands offered in one pass, the first {@code refused} of them not started. */
  private List<Command> pass(int refused) throws Exception {
    offered.clear();
    Pass pass =
        cluster.pass(
            command -> {
              offered.add(command);
              return offered.size() > refused;
            });
    drift.computeCommands(cluster.eligible(drift, pass, T0), cluster.budgets(drift, T0), pass);
    return offered;
  }

  private static List<String> names(Command command) {
    return command.candidates().stream().map(Candidate::name).toList();
  }

  @Test
  void aDriftedNodeWhosePodsFitElsewhereIsDeletedElseReplacedAtAnyPrice() throws Exception {
    drifted("old");
    cluster.pod("web", "old", 5000);
    cluster.node("roomy", cluster.large);

    assertThat(pass(0))
        .singleElement()
        .satisfies(c -> assertThat(c.decision()).isEqualTo("delete"));
    assertThat(names(offered.get(0))).containsExactly("old");

    cluster.pod("filler", "roomy", 4000); // no room for web now
    Command command = pass(0).get(0);
    assertThat(command.decision()).isEqualTo("replace");
    assertThat(command.replacements())
        .singleElement()
        .satisfies(n -> assertThat(n.type().name()).isEqualTo("large"));
    assertThat(command.priceBelow()).isEqualTo(Double.MAX_VALUE); // not a consolidation: any price
  }

  @Test
  void oneAtATimeWithinBudgetsTheNextTriedWhenAReplacementCannotBeLaunched() throws Exception {
    drifted("a");
    cluster.pod("a-pod", "a", 5000);
    drifted("b");
    cluster.pod("b-pod", "b", 5000);

    assertThat(pass(0)).extracting(DriftMethodTest::names).containsExactly(List.of("a"));
    assertThat(pass(1))
        .extracting(DriftMethodTest::names)
        .containsExactly(List.of("a"), List.of("b"));
    cluster.budget("0");
    assertThat(pass(0)).isEmpty();
  }

  @Test
  void aPodABudgetHoldsKeepsItsDriftedNodeUnlessTheClaimHasATerminationGracePeriod()
      throws Exception {
    NodeClaim claim = drifted("old");
    cluster.guarded("web", "old");
    cluster.node("roomy", cluster.large);
    assertThat(pass(0)).isEmpty();

    claim.getSpec().terminationGracePeriod = "1h";
    assertThat(pass(0)).extracting(DriftMethodTest::names).containsExactly(List.of("old"));
  }
}
