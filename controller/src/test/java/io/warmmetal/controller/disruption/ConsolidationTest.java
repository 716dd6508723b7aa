package io.warmmetal.controller.disruption;

import static io.warmmetal.controller.disruption.TestCluster.T0;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Multi- and single-node consolidation over a fixed cluster (types: small, 4 CPU at 1.0; large, 8
 * CPU at 1.5): what each decides, that a replacement must be cheaper, that pending pods take their
 * room first, that budgets hold, and that an unchanged cluster is not simulated again.
 */
class ConsolidationTest {
  private static final Instant NOW = T0.plusSeconds(60); // past consolidateAfter (30 s)
  private final TestCluster cluster = new TestCluster();
  private final Consolidation.LastFruitless lastFruitless = new Consolidation.LastFruitless();
  private final MultiNodeConsolidation multi = new MultiNodeConsolidation(lastFruitless);
  private final SingleNodeConsolidation single = new SingleNodeConsolidation(lastFruitless);
  private final List<Command> started = new ArrayList<>();

  /** A small node (4 CPU) with one pod of {@code cpuMilli}. */
  private void busy(String node, long cpuMilli) {
    cluster.node(node, cluster.small);
    cluster.pod(node + "-pod", node, cpuMilli);
  }

  /** The command the method starts in one pass now; null if none. */
  private Command decide(Method method) throws Exception {
    started.clear();
    Pass pass = cluster.pass(started::add);
    boolean acted =
        method.computeCommands(
            cluster.eligible(method, pass, NOW), cluster.budgets(method, NOW), pass);
    assertThat(acted).isEqualTo(!started.isEmpty());
    return started.isEmpty() ? null : started.get(0);
  }

  private static List<String> names(Command command) {
    return command.candidates().stream().map(Candidate::name).toList();
  }

  @Test
  void multiNodeConsolidationReplacesTwoNodesByOneCheaperWhereNeitherGoesAlone() throws Exception {
    cluster.budget("100%"); // Karpenter's default, 10 %, would allow one of two at once
    busy("a", 3000);
    busy("b", 3000);

    Command command = decide(multi);
    assertThat(names(command)).containsExactly("a", "b");
    assertThat(command.replacements()).hasSize(1);
    assertThat(command.replacements().get(0).type().name()).isEqualTo("large"); // 1.5 < 2.0
    assertThat(command.priceBelow()).isEqualTo(2.0);
    assertThat(command.method().consolidationType()).isEqualTo("multi");
    // Alone, neither fits on the other, and a new small node costs as much as the one it replaces.
    assertThat(decide(new SingleNodeConsolidation(new Consolidation.LastFruitless()))).isNull();
  }

  @Test
  void singleNodeConsolidationFirstTriesTheNodeThatSavesMostPerDisruption() throws Exception {
    // Upstream's order (price over disruption cost): the large node saves 1.5 for one pod moved,
    // the small one 1.0; each one's pod fits on the other.
    cluster.node("dearer", cluster.large);
    cluster.pod("api", "dearer", 2000);
    cluster.node("cheaper", cluster.small);
    cluster.pod("web", "cheaper", 500);

    Command command = decide(single);
    assertThat(names(command)).containsExactly("dearer");
    assertThat(command.decision()).isEqualTo("delete");
  }

  @Test
  void ofNodesThatCostAlikeTheOneWithFewerPodsToMoveGoesFirst() throws Exception {
    cluster.node("two-pods", cluster.small);
    cluster.pod("a", "two-pods", 250);
    cluster.pod("b", "two-pods", 250);
    cluster.node("one-pod", cluster.small);
    cluster.pod("c", "one-pod", 1000);

    assertThat(names(decide(single))).containsExactly("one-pod");
  }

  @Test
  void aReplacementMustCostLessThanTheNodeItReplaces() throws Exception {
    cluster.node("big", cluster.large);
    cluster.pod("web", "big", 3000);
    Command command = decide(single);
    assertThat(command.replacements())
        .singleElement()
        .satisfies(n -> assertThat(n.type().name()).isEqualTo("small"));
    assertThat(command.priceBelow()).isEqualTo(1.5);

    TestCluster alone = new TestCluster();
    alone.node("small", alone.small);
    alone.pod("web", "small", 3000);
    Pass pass = alone.pass(started::add);
    started.clear();
    assertThat(
            single.computeCommands(
                alone.eligible(single, pass, NOW), alone.budgets(single, NOW), pass))
        .isFalse();
  }

  @Test
  void pendingPodsTakeTheRoomTheyWouldUseFirst() throws Exception {
    busy("b", 3000);
    busy("c", 3000);
    busy("a", 1000);
    assertThat(names(decide(single))).containsExactly("a"); // its pod fits in b's last CPU

    cluster.pending("waiting", 1000); // b's last CPU, then c's: none left for a's pod
    cluster.pending("waiting-too", 1000);
    assertThat(cluster.pass(started::add).simulation().nominated())
        .containsExactlyInAnyOrder("b", "c");
    assertThat(decide(single)).isNull();
  }

  @Test
  void budgetsHoldForSeveralNodesAtOnce() throws Exception {
    busy("a", 3000);
    busy("b", 3000);
    cluster.budget("1");
    assertThat(decide(multi)).isNull();
    cluster.budget("2");
    assertThat(names(decide(multi))).containsExactly("a", "b");
  }

  @Test
  void anUnchangedClusterIsNotSimulatedAgainOnceConsolidationFoundNothing() throws Exception {
    busy("a", 3000);
    assertThat(decide(multi)).isNull();
    assertThat(decide(single)).isNull();
    int simulations = cluster.simulations;
    assertThat(simulations).isPositive();

    assertThat(decide(multi)).isNull();
    assertThat(decide(single)).isNull();
    assertThat(cluster.simulations).isEqualTo(simulations);

    cluster.pod("a-pod-2", "a", 100); // a pod came: simulated again
    assertThat(decide(single)).isNull();
    assertThat(cluster.simulations).isGreaterThan(simulations);
  }
}
