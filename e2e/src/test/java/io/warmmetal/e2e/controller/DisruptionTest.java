package io.warmmetal.e2e.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.RealCluster;
import io.warmmetal.protocol.testing.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Nodes going away, on a real control plane: consolidation of empty and underutilized nodes within
 * budgets and do-not-disrupt, and the termination finalizer's drain through the real Eviction API,
 * which refuses what a PodDisruptionBudget (its status kept by kube-controller-manager) does not
 * allow. kube-scheduler places every pod; the simulated kubelets run them and finish them when they
 * are evicted.
 */
@ExtendWith({VertxExtension.class, RealCluster.class})
@Tag("cluster")
class DisruptionTest {
  private Fleet cluster;
  private KubernetesClient kube;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private void start(Vertx vertx, ControlPlane controlPlane, int agents, Consumer<NodePool> pool)
      throws Exception {
    cluster = Fleet.start(vertx, controlPlane, agents, pool);
    kube = cluster.kube;
  }

  private static Pod labelled(Pod pod, Map<String, String> labels) {
    pod.getMetadata().setLabels(labels);
    return pod;
  }

  /** A pod that may only go to {@code node}: kube-scheduler puts it there. */
  private static Pod on(Pod pod, String node) {
    pod.getSpec().setNodeSelector(Map.of("kubernetes.io/hostname", node));
    return pod;
  }

  private boolean gone(String pod) {
    return kube.pods().inNamespace("default").withName(pod).get() == null;
  }

  private void running(String pod) throws InterruptedException {
    Await.until(
        pod + " running",
        () -> {
          Pod p = kube.pods().inNamespace("default").withName(pod).get();
          return p != null && p.getStatus() != null && "Running".equals(p.getStatus().getPhase());
        });
  }

  /**
   * Launches a node for a pending pod, which kube-scheduler then binds there; returns the node's
   * name.
   */
  private String nodeFor(Pod pod) throws Exception {
    cluster.create(pod);
    String node = cluster.awaitScheduled(pod.getMetadata().getName());
    running(pod.getMetadata().getName());
    return node;
  }

  private NodeClaim claimOf(String node) {
    return cluster.claimOf(node);
  }

  private String instanceState(NodeClaim claim) {
    return cluster
        .fx
        .db()
        .preparedQuery("SELECT state FROM instances WHERE id = $1")
        .execute(Tuple.of(claim.getMetadata().getAnnotations().get("warmmetal.io/instance-id")))
        .await()
        .iterator()
        .next()
        .getString("state");
  }

  private static void disruption(NodePool pool, String policy, String after, String budget) {
    pool.getSpec().disruption = new NodePool.Disruption();
    pool.getSpec().disruption.consolidationPolicy = policy;
    pool.getSpec().disruption.consolidateAfter = after;
    if (budget != null) {
      NodePool.Budget b = new NodePool.Budget();
      b.nodes = budget;
      pool.getSpec().disruption.budgets.add(b);
    }
  }

  @Test
  void anEmptyNodeGoesAfterConsolidateAfterWhenItsBudgetAllows(
      Vertx vertx, ControlPlane controlPlane) throws Exception {
    start(vertx, controlPlane, 2, pool -> disruption(pool, "WhenEmpty", "1s", "0"));
    String node = nodeFor(Fleet.pod("web", "2"));
    NodeClaim claim = claimOf(node);
    kube.pods().inNamespace("default").withName("web").delete();

    // Empty for longer than consolidateAfter (marked Consolidatable, as upstream), but the budget
    // allows no
    // disruption: three passes later it is still there.
    Await.until(
        "marked Consolidatable, as upstream",
        () -> Conditions.isTrue(claimOf(node).getStatus().conditions, Conditions.CONSOLIDATABLE));
    cluster.awaitPasses(3);
    assertThat(claimOf(node)).isNotNull(); // the budget holds
    assertThat(instanceState(claim)).isEqualTo("running");

    cluster.updatePool(
        pool -> pool.getSpec().disruption.budgets.clear()); // Karpenter's default: 10 %, at least 1
    Await.until("the empty node's claim is gone", () -> claimOf(node) == null);
    assertThat(kube.nodes().withName(node).get()).isNull();
    assertThat(instanceState(claim)).isIn("shutting-down", "terminated");
    Await.until("its machine reset and warm again", () -> cluster.warm() == 2);
  }

  @Test
  void aNodeDeletedByHandIsDrainedAndItsClaimAndInstanceGoToo(
      Vertx vertx, ControlPlane controlPlane) throws Exception {
    start(vertx, controlPlane, 2, pool -> disruption(pool, "WhenEmpty", "Never", null));
    String node = nodeFor(Fleet.pod("web", "2"));
    NodeClaim claim = claimOf(node);
    assertThat(kube.nodes().withName(node).get().getMetadata().getFinalizers())
        .as("registered with upstream's termination finalizer")
        .contains(WellKnown.TERMINATION_FINALIZER);

    kube.nodes().withName(node).delete(); // kubectl delete node

    Await.until(
        "the Node, its claim and its instance gone",
        () ->
            kube.nodes().withName(node).get() == null
                && kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).get()
                    == null,
        60_000);
    assertThat(cluster.controllerEvent("Evicted", "web")).as("drained, not dropped").isTrue();
    assertThat(instanceState(claim)).isIn("shutting-down", "terminated");
    Await.until("its machine reset and warm again", () -> cluster.warm() == 2);
  }

  @Test
  void aNodePastExpireAfterIsReplacedEvenWithAllItsPodsBusy(Vertx vertx, ControlPlane controlPlane)
      throws Exception {
    start(
        vertx,
        controlPlane,
        2,
        pool -> {
          disruption(pool, "WhenEmpty", "Never", "0"); // budgets do not hold expiry back
          pool.getSpec().template.spec.expireAfter = "6s";
        });
    String node = nodeFor(Fleet.pod("long-running", "2"));
    NodeClaim claim = claimOf(node);

    Await.until(
        "the expired node drained and gone",
        () ->
            kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).get() == null
                && kube.nodes().withName(node).get() == null,
        60_000);
    assertThat(gone("long-running")).isTrue(); // evicted, as Karpenter's forceful expiry does
    assertThat(instanceState(claim)).isIn("shutting-down", "terminated");
  }

  @Test
  void aDrainEvictsNoFasterThanThePodDisruptionBudgetAllows(Vertx vertx, ControlPlane controlPlane)
      throws Exception {
    start(vertx, controlPlane, 2, pool -> disruption(pool, "WhenEmpty", "Never", null));
    Map<String, String> app = Map.of("app", "a");
    String node = nodeFor(labelled(Fleet.pod("a-0", "1"), app));
    cluster.create(on(labelled(Fleet.pod("a-1", "1"), app), node));
    running("a-1");
    // The policy/v1beta1 API: this control plane (1.20) serves no policy/v1.
    kube.resources(PodDisruptionBudget.class)
        .inNamespace("default")
        .resource(
            new PodDisruptionBudgetBuilder()
                .withNewMetadata()
                .withName("a")
                .withNamespace("default")
                .endMetadata()
                .withNewSpec()
                .withMinAvailable(new IntOrString(1))
                .withNewSelector()
                .withMatchLabels(app)
                .endSelector()
                .endSpec()
                .build())
        .create();
    Await.until(
        "the budget allows one disruption",
        () -> {
          var pdb =
              kube.resources(PodDisruptionBudget.class).inNamespace("default").withName("a").get();
          return pdb.getStatus() != null
              && Integer.valueOf(1).equals(pdb.getStatus().getDisruptionsAllowed());
        });
    NodeClaim claim = claimOf(node);

    kube.resources(NodeClaim.class)
        .withName(claim.getMetadata().getName())
        .delete(); // kubectl delete nodeclaim
    Await.until("one pod evicted", () -> gone("a-0") || gone("a-1"));
    Await.until(
        "the node tainted disrupted",
        () ->
            kube.nodes().withName(node).get().getSpec().getTaints().stream()
                .anyMatch(t -> t.getKey().equals("karpenter.sh/disrupted")));
    cluster.awaitPasses(
        3); // each drains what the budget allows: the other must stay, the one pod it keeps
    assertThat(gone("a-0") && gone("a-1")).isFalse();
    var drained =
        Conditions.get(
            kube.resources(NodeClaim.class)
                .withName(claim.getMetadata().getName())
                .get()
                .getStatus()
                .conditions,
            "Drained");
    assertThat(drained.getStatus() + " " + drained.getReason()).isEqualTo("Unknown Draining");
    assertThat(kube.nodes().withName(node).get()).isNotNull();
    assertThat(instanceState(claim)).isEqualTo("running");

    // Its replacement: the draining node takes no pods, so the controller launches another node for
    // it.
    cluster.create(labelled(Fleet.pod("a-2", "1"), app));
    String other = cluster.awaitScheduled("a-2");
    assertThat(other).isNotEqualTo(node);
    running("a-2");
    Await.until(
        "the second pod evicted and the node terminated",
        () ->
            gone("a-0")
                && gone("a-1")
                && claimOf(node) == null
                && kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).get()
                    == null,
        60_000);
    assertThat(kube.nodes().withName(node).get()).isNull();
    assertThat(instanceState(claim)).isIn("shutting-down", "terminated");
  }

  @Test
  void anUnderutilizedNodeGoesWhenItsPodsFitElsewhereUnlessAPodMayNotBeDisrupted(
      Vertx vertx, ControlPlane controlPlane) throws Exception {
    start(vertx, controlPlane, 2, pool -> disruption(pool, "WhenEmptyOrUnderutilized", "1s", null));
    // big-0 may not be disrupted either, or a would go instead: its pod fits on b as well as b's on
    // a.
    Pod big0 = Fleet.pod("big-0", "10");
    big0.getMetadata().setAnnotations(Map.of("karpenter.sh/do-not-disrupt", "true"));
    String a = nodeFor(big0);
    String b = nodeFor(Fleet.pod("big-1", "10"));
    assertThat(b).isNotEqualTo(a);
    // Placed on b by name (as a DaemonSet's pods are): a node selector would keep it from fitting
    // anywhere else.
    Pod small = Fleet.pod("small", "1");
    small.getSpec().setNodeName(b);
    small.getMetadata().setAnnotations(Map.of("karpenter.sh/do-not-disrupt", "true"));
    cluster.create(small);
    running("small");
    Instant deleted = Instant.now();
    kube.pods()
        .inNamespace("default")
        .withName("big-1")
        .delete(); // b keeps 1 cpu of work; a has 5.9 cpu free

    // b's pods last changed past its consolidateAfter (1 s) ago: three passes would have
    // consolidated it, or a.
    Await.until(
        "big-1's going recorded on b",
        () -> {
          NodeClaim claim = claimOf(b);
          String at = claim.getStatus().lastPodEventTime;
          return at != null && !Instant.parse(at).isBefore(deleted) && gone("big-1");
        });
    Instant quietFrom = Instant.parse(claimOf(b).getStatus().lastPodEventTime).plusSeconds(1);
    Await.until("past consolidateAfter", () -> Instant.now().isAfter(quietFrom));
    cluster.awaitPasses(3);
    assertThat(claimOf(a)).isNotNull();
    assertThat(claimOf(b)).isNotNull();
    assertThat(gone("small")).isFalse();

    Fleet.retrying(
        () ->
            kube.pods()
                .inNamespace("default")
                .withName("small")
                .edit(
                    p -> {
                      p.getMetadata().setAnnotations(Map.of());
                      return p;
                    }));
    Await.until("b consolidated away", () -> claimOf(b) == null);
    assertThat(gone("small")).isTrue(); // evicted (a bare pod: nothing recreates it)
    assertThat(claimOf(a)).isNotNull(); // a holds big-0, which may not be disrupted
  }

  @Test
  void aDeletedNodeClaimsInstanceIsTerminatedEvenIfItsLaunchWasNeverRecorded(
      Vertx vertx, ControlPlane controlPlane) throws Exception {
    start(vertx, controlPlane, 1, pool -> disruption(pool, "WhenEmpty", "Never", null));
    String node = nodeFor(Fleet.pod("web", "1"));
    NodeClaim claim = claimOf(node);
    String instance = claim.getMetadata().getAnnotations().get("warmmetal.io/instance-id");
    // As if the controller had stopped between the launch and recording it on the claim.
    Fleet.retrying(
        () ->
            kube.resources(NodeClaim.class)
                .withName(claim.getMetadata().getName())
                .edit(
                    c -> {
                      c.getMetadata().getAnnotations().remove("warmmetal.io/instance-id");
                      return c;
                    }));
    kube.pods().inNamespace("default").withName("web").delete();
    kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).delete();

    Await.until(
        "the claim gone",
        () ->
            kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).get() == null);
    assertThat(
            cluster
                .fx
                .db()
                .preparedQuery("SELECT state FROM instances WHERE id = $1")
                .execute(Tuple.of(instance))
                .await()
                .iterator()
                .next()
                .getString("state"))
        .isIn("shutting-down", "terminated");
  }

  @Test
  void aPodIsDeletedEarlyEnoughForItsOwnGracePeriodToEndByTheNodesDeadline(
      Vertx vertx, ControlPlane controlPlane) throws Exception {
    start(
        vertx,
        controlPlane,
        2,
        pool -> {
          disruption(pool, "WhenEmpty", "Never", null);
          pool.getSpec().template.spec.terminationGracePeriod = "20s";
        });
    Map<String, String> app = Map.of("app", "slow");
    Pod slow = labelled(Fleet.pod("slow", "1"), app);
    slow.getSpec().setTerminationGracePeriodSeconds(30L); // longer than the node's 20 s
    String node = nodeFor(slow);
    // A budget that allows no eviction at all: only the deadline can take the pod.
    kube.resources(PodDisruptionBudget.class)
        .inNamespace("default")
        .resource(
            new PodDisruptionBudgetBuilder()
                .withNewMetadata()
                .withName("slow")
                .withNamespace("default")
                .endMetadata()
                .withNewSpec()
                .withMinAvailable(new IntOrString(1))
                .withNewSelector()
                .withMatchLabels(app)
                .endSelector()
                .endSpec()
                .build())
        .create();
    NodeClaim claim = claimOf(node);

    long deleted = System.nanoTime();
    kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).delete();
    // Its 30 s grace cannot fit in the node's 20 s: it is deleted at once, not when the 20 s are
    // up.
    Await.until(
        "the pod deleted by the termination deadline",
        () -> {
          Pod p = kube.pods().inNamespace("default").withName("slow").get();
          return p == null || p.getMetadata().getDeletionTimestamp() != null;
        });
    assertThat(Duration.ofNanos(System.nanoTime() - deleted)).isLessThan(Duration.ofSeconds(15));
    Await.until(
        "a Disrupted event on it",
        () ->
            kube.v1().events().inNamespace("default").list().getItems().stream()
                .anyMatch(
                    e ->
                        "Disrupted".equals(e.getReason())
                            && "slow".equals(e.getInvolvedObject().getName())));
    Await.until("the node gone", () -> kube.nodes().withName(node).get() == null, 60_000);
  }
}
