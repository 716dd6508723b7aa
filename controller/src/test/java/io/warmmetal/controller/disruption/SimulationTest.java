package io.warmmetal.controller.disruption;

import static io.warmmetal.controller.disruption.TestCluster.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Where the simulation puts pods over a fixed cluster (small nodes, 4 CPU): the pods with no place
 * now — pending ones, and those of a node being deleted — take their room first, on the nodes they
 * tolerate, and those nodes keep their taints for the pods being moved.
 */
class SimulationTest {
  private final TestCluster cluster = new TestCluster();

  private Candidate candidate(String name) {
    return cluster.candidates(T0).stream().filter(c -> c.name().equals(name)).findFirst().get();
  }

  @Test
  void aNodePendingPodsAreHeadedForKeepsItsOwnTaintsForThePodsBeingMoved() throws Exception {
    cluster.node("cordoned", cluster.small);
    cluster.pod("db", "cordoned", 3000);
    cluster.taints.put(
        "cordoned",
        List.of(
            new TaintBuilder()
                .withKey("node.kubernetes.io/unschedulable")
                .withEffect("NoSchedule")
                .build()));
    cluster.node("a", cluster.small);
    cluster.pod("web", "a", 400);
    cluster
        .pending("tolerant", 500)
        .getSpec()
        .setTolerations(List.of(new TolerationBuilder().withOperator("Exists").build()));

    Simulation simulation = cluster.pass(command -> true).simulation();
    assertThat(simulation.nominated()).containsExactly("cordoned");
    // The cordoned node has 500m left after the pending pod, but web does not tolerate the cordon:
    // it needs a new node.
    Simulation.Result result = simulation.simulate(List.of(candidate("a")));
    assertThat(result.plan().unschedulable()).isEmpty();
    assertThat(result.plan().nodes()).singleElement();
  }

  @Test
  void thePodsOfANodeBeingDeletedNominateTheNodeTheyWouldGoTo() throws Exception {
    cluster.node("going", cluster.small).getMetadata().setDeletionTimestamp(T0.toString());
    cluster.pod("api", "going", 1000);
    cluster.node("full", cluster.small);
    cluster.pod("db", "full", 4000);
    cluster.node("b", cluster.small);
    cluster.pod("web", "b", 1000);

    assertThat(cluster.pass(command -> true).simulation().nominated()).containsExactly("b");
  }
}
