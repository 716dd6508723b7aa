package io.warmmetal.controller.disruption;

import static io.warmmetal.controller.disruption.TestCluster.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.events.WrittenEvents;
import io.warmmetal.controller.karpenter.WellKnown;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Emptiness over a fixed cluster: which nodes it takes and how many at once. The mock API server
 * only keeps the events it tells.
 */
@EnableKubernetesMockClient(crud = true)
class EmptinessTest {
  KubernetesClient kube;
  private Recorder events;
  private Emptiness emptiness;
  private final TestCluster cluster = new TestCluster();
  private final List<Command> started = new ArrayList<>();

  @AfterEach
  void close() {
    if (events != null) {
      events.close();
    }
  }

  private Emptiness emptiness() {
    if (emptiness == null) {
      events = new Recorder(kube);
      emptiness = new Emptiness(events);
    }
    return emptiness;
  }

  /** What one pass at {@code now} starts: the candidates of each command. */
  private List<List<String>> pass(Instant now) throws Exception {
    started.clear();
    Pass pass = cluster.pass(started::add);
    List<Candidate> eligible = cluster.eligible(emptiness(), pass, now);
    emptiness().computeCommands(eligible, cluster.budgets(emptiness(), now), pass);
    return started.stream()
        .map(c -> c.candidates().stream().map(Candidate::name).toList())
        .toList();
  }

  @Test
  void anEmptyNodePastConsolidateAfterGoesNotOneWithPodsOrADoNotDisruptPodOrQuietTooShort()
      throws Exception {
    cluster.budget("100%");
    cluster.node("empty", cluster.small);
    cluster.node("busy", cluster.small);
    cluster.pod("web", "busy", 500);
    cluster.node("kept", cluster.small);
    Pod batch = cluster.pod("batch", "kept", 500);
    batch.getMetadata().setAnnotations(Map.of(WellKnown.DO_NOT_DISRUPT_ANNOTATION, "true"));
    cluster.node("emptied-lately", cluster.small).getStatus().lastPodEventTime =
        T0.plusSeconds(20).toString();

    assertThat(pass(T0.plusSeconds(29))).isEmpty(); // consolidateAfter is 30 s
    assertThat(pass(T0.plusSeconds(30))).containsExactly(List.of("empty"));
    assertThat(started.get(0).decision()).isEqualTo("delete");
    assertThat(pass(T0.plusSeconds(50)))
        .containsExactly(List.of("empty"), List.of("emptied-lately"));
  }

  @Test
  void aPoolsBudgetCapsHowManyGoAtOnceCountingThoseGoingAlready() throws Exception {
    cluster.node("a", cluster.small);
    cluster.node("b", cluster.small);
    cluster.node("c", cluster.small);
    Instant later = T0.plusSeconds(60);
    // No budget: Karpenter's default, 10 % of the pool's nodes rounded up — one.
    assertThat(pass(later)).containsExactly(List.of("a"));

    cluster.budget("2");
    assertThat(pass(later)).containsExactly(List.of("a"), List.of("b"));
    cluster.budget("0");
    assertThat(pass(later)).isEmpty();
    cluster.budget("1");
    cluster.node("going", cluster.small).getMetadata().setDeletionTimestamp(T0.toString());
    assertThat(pass(later)).isEmpty(); // the one going takes the budget
  }

  @Test
  void aNodeABuffersVirtualPodWouldGoToHoldsItsRoomAndIsNotEmptyAsUpstreamSays() throws Exception {
    cluster.node("room", cluster.small);
    Pod virtual = cluster.pending("buffer-0", 1000);
    virtual
        .getMetadata()
        .setAnnotations(Map.of(WellKnown.CAPACITY_BUFFER_FAKE_POD_ANNOTATION, "true"));

    assertThat(pass(T0.plusSeconds(60))).isEmpty();
    List<Event> written = WrittenEvents.in(kube, events, "default");
    assertThat(written)
        .anySatisfy(
            e -> {
              assertThat(e.getReason()).isEqualTo("Unconsolidatable");
              assertThat(e.getMessage()).isEqualTo("Node \"room\" has buffer pods");
            });
    // Consolidation may still move the room elsewhere.
    Pass pass = cluster.pass(started::add);
    assertThat(
            new SingleNodeConsolidation(new Consolidation.LastFruitless())
                .shouldDisrupt(cluster.candidates(T0.plusSeconds(60)).get(0), pass))
        .isTrue();
  }
}
