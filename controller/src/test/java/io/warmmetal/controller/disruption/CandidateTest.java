package io.warmmetal.controller.disruption;

import static io.warmmetal.controller.disruption.TestCluster.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.WellKnown;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which nodes a pass considers at all, and what it knows of each, over a fixed cluster at chosen
 * instants: do-not-disrupt on the claim, its Node or a pod (for the pod's time) spares a node; a
 * command under way or an unknown NodePool does too; consolidateAfter counts from the last pod
 * event; a PodDisruptionBudget that will not let a pod go makes its node undrainable, which only an
 * eventual method with a terminationGracePeriod gets past.
 */
class CandidateTest {
  private final TestCluster cluster = new TestCluster();

  /** The candidates a graceful method may take. */
  private List<String> names(Instant now) {
    return cluster.candidates(now).stream()
        .filter(c -> c.disruptableBy(Method.DisruptionClass.GRACEFUL))
        .map(Candidate::name)
        .toList();
  }

  @Test
  void doNotDisruptOnTheClaimItsNodeOrAPodSparesTheNodeForThePodsTime() {
    cluster.node("free", cluster.small);
    TestCluster.annotate(
        cluster.node("claim-marked", cluster.small), WellKnown.DO_NOT_DISRUPT_ANNOTATION, "true");
    cluster.node("node-marked", cluster.small);
    TestCluster.annotate(cluster.nodes.get(2), WellKnown.DO_NOT_DISRUPT_ANNOTATION, "true");
    cluster.node("pod-marked", cluster.small);
    TestCluster.annotate(
        cluster.pod("batch", "pod-marked", 500), WellKnown.DO_NOT_DISRUPT_ANNOTATION, "true");
    cluster.node("pod-for-ten-minutes", cluster.small);
    Pod job = cluster.pod("job", "pod-for-ten-minutes", 500);
    TestCluster.annotate(job, WellKnown.DO_NOT_DISRUPT_ANNOTATION, "10m");
    job.getStatus().setStartTime(T0.toString());

    assertThat(names(T0.plus(Duration.ofMinutes(9)))).containsExactly("free");
    assertThat(names(T0.plus(Duration.ofMinutes(11))))
        .containsExactly("free", "pod-for-ten-minutes");
  }

  @Test
  void aNodeInACommandUnderWayOrOfAPoolThatIsNotThereIsNoCandidate() {
    cluster.node("a", cluster.small);
    TestCluster.annotate(
        cluster.node("replaced", cluster.small), Commands.REPLACED_BY, "replacement");
    cluster
        .node("orphan", cluster.small)
        .getMetadata()
        .getLabels()
        .put(WellKnown.NODEPOOL_LABEL, "gone");

    assertThat(names(T0)).containsExactly("a");
  }

  @Test
  void consolidatableOnceItsPodsHaveBeenQuietForConsolidateAfter() {
    NodeClaim claim = cluster.node("a", cluster.small);
    cluster.pod("web", "a", 500);

    assertThat(cluster.candidates(T0.plusSeconds(29)).get(0).consolidatable()).isFalse();
    assertThat(cluster.candidates(T0.plusSeconds(30)).get(0).consolidatable()).isTrue();

    claim.getStatus().lastPodEventTime = null; // not recorded yet: the clock has not started
    assertThat(cluster.candidates(T0.plusSeconds(3600)).get(0).consolidatable()).isFalse();
    claim.getStatus().lastPodEventTime = T0.toString();
    cluster.pool.getSpec().disruption.consolidateAfter = "Never";
    assertThat(cluster.candidates(T0.plusSeconds(3600)).get(0).consolidatable()).isFalse();
  }

  @Test
  void aPodABudgetWillNotLetGoMakesItsNodeUndrainableButForAnEventualMethodWithAGracePeriod() {
    cluster.node("a", cluster.small);
    cluster.pod("web", "a", 500);
    assertThat(cluster.candidates(T0).get(0).drainable()).isTrue();

    cluster.guarded("db", "a");
    Candidate held = cluster.candidates(T0).get(0);
    assertThat(held.drainable()).isFalse();
    assertThat(held.disruptableBy(Method.DisruptionClass.GRACEFUL)).isFalse();
    assertThat(held.disruptableBy(Method.DisruptionClass.EVENTUAL)).isFalse();

    cluster.claims.get(0).getSpec().terminationGracePeriod = "1h";
    held = cluster.candidates(T0).get(0);
    assertThat(held.disruptableBy(Method.DisruptionClass.GRACEFUL)).isFalse();
    assertThat(held.disruptableBy(Method.DisruptionClass.EVENTUAL)).isTrue();
  }
}
