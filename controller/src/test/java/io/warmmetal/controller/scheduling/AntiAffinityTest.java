package io.warmmetal.controller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Anti-affinity over a topology key other than the hostname is checked against where pods are now:
 * a new node that grows into another type (another value of the key) takes its pods into that
 * domain.
 */
class AntiAffinityTest {
  private static final long GIB = 1L << 30;
  private static final String TYPE_KEY = "node.kubernetes.io/instance-type";

  private static InstanceType type(String name, int cpus, double price, int machines) {
    return new InstanceType(
        name,
        Map.of(TYPE_KEY, name, "kubernetes.io/arch", "amd64"),
        Resources.of(cpus * 1000L, cpus * 4 * GIB),
        price,
        0,
        List.of(new InstanceType.Offering(null, null, machines, 0)));
  }

  private static PodRequest pod(String name, Map<String, String> labels) {
    return new PodRequest(name, Resources.of(4000, GIB), Map.of(), List.of(), List.of())
        .withIdentity("default", labels);
  }

  @Test
  void aNodeThatGrowsIntoAnotherTypeTakesItsPodsIntoThatDomain() {
    PodAffinityTerm notWithB =
        new PodAffinityTerm(
            new LabelSelectorBuilder().addToMatchLabels("app", "b").build(),
            Set.of("default"),
            TYPE_KEY);
    // Alike in size, so placed in this order: b opens a node of the one small machine; a may not
    // share a type with b, so gets a big one; c no longer fits beside b on a small node, so b's
    // node grows into a big one (and gives the small machine back); d may not share a type with
    // b either — now big — so not a's node: the small machine. (That a now shares a type with b
    // is as before: a node's growth is not checked against pods placed on other nodes.)
    List<PodRequest> pods =
        List.of(
            pod("b", Map.of("app", "b")),
            pod("a", Map.of()).withAntiAffinity(List.of(notWithB)),
            pod("c", Map.of()),
            pod("d", Map.of()).withAntiAffinity(List.of(notWithB)));
    NodePoolView pool = new NodePoolView("general", 0, Map.of(), List.of(), List.of(), null);

    Scheduler.Plan plan =
        new Scheduler(Resources.of(100, GIB / 2))
            .schedule(
                pods, List.of(pool), List.of(type("small", 8, 0.4, 1), type("big", 16, 0.8, 10)));

    assertThat(plan.unschedulable()).isEmpty();
    assertThat(plan.nodes())
        .extracting(n -> n.type().name() + " " + n.pods().stream().map(PodRequest::name).toList())
        .containsExactly("big [b, c]", "big [a]", "small [d]");
  }
}
