package io.warmmetal.api.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.Await;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Nodes going away: consolidation of empty and underutilized nodes within budgets and do-not-disrupt, and the
 * termination finalizer's drain honouring a PodDisruptionBudget — the real controller on the mock API server, the
 * real API, simulated agents. The mock server has no Eviction API, so the test plays it (and the kubelet that then
 * stops the pod): an eviction it is asked for deletes the pod.
 */
@ExtendWith(VertxExtension.class)
@EnableKubernetesMockClient(crud = true)
class DisruptionTest {
  KubernetesClient kube;
  KubernetesMockServer server;
  private ClusterFixture cluster;
  private final List<String> evicted = new CopyOnWriteArrayList<>();
  private final ExecutorService kubelet = Executors.newSingleThreadExecutor();

  @AfterEach
  void stop() throws Exception {
    try {
      everyRequestOfTheControllerIsAllowedByTheShippedRbac();
    } finally {
      cluster.close();
      kubelet.shutdownNow();
    }
  }

  /** What the controller asked of the API server in this test, against deploy/controller.yaml's RBAC. */
  private void everyRequestOfTheControllerIsAllowedByTheShippedRbac() throws Exception {
    RbacRules rbac = RbacRules.shipped();
    java.util.Set<String> needs = new java.util.TreeSet<>();
    for (var r = server.takeRequest(0, java.util.concurrent.TimeUnit.MILLISECONDS); r != null;
        r = server.takeRequest(0, java.util.concurrent.TimeUnit.MILLISECONDS)) {
      if (io.warmmetal.controller.Controller.USER_AGENT.equals(r.getHeader("User-Agent"))) {
        needs.add(RbacRules.need(r.getMethod(), r.getPath()));
      }
    }
    assertThat(needs).isNotEmpty().allSatisfy(need -> assertThat(rbac.allows(need))
        .as("deploy/controller.yaml allows '%s'", need).isTrue());
  }

  private void evictable(String pod) {
    server.expect().post().withPath("/api/v1/namespaces/default/pods/" + pod + "/eviction")
        .andReply(201, request -> {
          evicted.add(pod);
          kubelet.submit(() -> kube.pods().inNamespace("default").withName(pod).delete());
          return new StatusBuilder().withStatus("Success").build();
        }).always();
  }

  private static Pod labelled(Pod pod, Map<String, String> labels) {
    pod.getMetadata().setLabels(labels);
    return pod;
  }

  /** Launches a node for a pending pod and binds the pod there; returns the node's name. */
  private String nodeFor(Pod pod) throws Exception {
    List<String> before = new ArrayList<>(cluster.nodeNames());
    kube.pods().inNamespace("default").resource(pod).create();
    String node = cluster.awaitNewNode(before);
    cluster.bind(kube.pods().inNamespace("default").withName(pod.getMetadata().getName()).get(), node);
    return node;
  }

  private NodeClaim claimOf(String node) {
    return cluster.claims().stream().filter(c -> c.getStatus() != null && node.equals(c.getStatus().nodeName))
        .findFirst().orElse(null);
  }

  private String instanceState(NodeClaim claim) {
    return cluster.fx.db().preparedQuery("SELECT state FROM instances WHERE id = $1")
        .execute(io.vertx.sqlclient.Tuple.of(claim.getMetadata().getAnnotations().get("warmmetal.io/instance-id")))
        .await().iterator().next().getString("state");
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
  void anEmptyNodeGoesAfterConsolidateAfterWhenItsBudgetAllows(Vertx vertx) throws Exception {
    cluster = ClusterFixture.start(vertx, kube, 2, pool -> disruption(pool, "WhenEmpty", "1s", "0"));
    String node = nodeFor(ClusterFixture.pending("web", "2"));
    NodeClaim claim = claimOf(node);
    kube.pods().inNamespace("default").withName("web").delete();

    Thread.sleep(2_500); // empty for longer than consolidateAfter, but the budget allows no disruption
    assertThat(claimOf(node)).isNotNull();
    assertThat(instanceState(claim)).isEqualTo("running");

    cluster.updatePool(pool -> pool.getSpec().disruption.budgets.clear()); // Karpenter's default: 10 %, at least 1
    Await.until("the empty node's claim is gone", () -> claimOf(node) == null);
    assertThat(kube.nodes().withName(node).get()).isNull();
    assertThat(instanceState(claim)).isIn("shutting-down", "terminated");
    Await.until("its machine reset and warm again", () -> cluster.warm() == 2);
  }

  @Test
  void aDrainEvictsNoFasterThanThePodDisruptionBudgetAllows(Vertx vertx) throws Exception {
    cluster = ClusterFixture.start(vertx, kube, 1, pool -> disruption(pool, "WhenEmpty", "Never", null));
    Map<String, String> app = Map.of("app", "a");
    String node = nodeFor(labelled(ClusterFixture.pending("a-0", "1"), app));
    cluster.bind(labelled(ClusterFixture.pending("a-1", "1"), app), node);
    kube.resources(io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget.class).inNamespace("default")
        .resource(new PodDisruptionBudgetBuilder().withNewMetadata().withName("a").withNamespace("default")
            .endMetadata().withNewSpec().withMinAvailable(new IntOrString(1)).withNewSelector()
            .withMatchLabels(app).endSelector().endSpec().build()).create();
    List.of("a-0", "a-1", "a-2").forEach(this::evictable);
    NodeClaim claim = claimOf(node);

    kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).delete(); // kubectl delete nodeclaim
    Await.until("one pod evicted", () -> evicted.size() == 1);
    Await.until("the node tainted disrupted", () -> kube.nodes().withName(node).get().getSpec().getTaints()
        .stream().anyMatch(t -> t.getKey().equals("karpenter.sh/disrupted")));
    Thread.sleep(2_000); // the other must stay: it is the one pod the budget keeps
    assertThat(evicted).hasSize(1);
    assertThat(kube.nodes().withName(node).get()).isNotNull();
    assertThat(instanceState(claim)).isEqualTo("running");

    cluster.bind(labelled(ClusterFixture.pending("a-2", "1"), app), "elsewhere"); // its replacement runs elsewhere
    Await.until("the second pod evicted and the node terminated", () -> claimOf(node) == null
        && kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).get() == null);
    assertThat(evicted).containsExactlyInAnyOrder("a-0", "a-1");
    assertThat(kube.nodes().withName(node).get()).isNull();
    assertThat(instanceState(claim)).isIn("shutting-down", "terminated");
  }

  @Test
  void anUnderutilizedNodeGoesWhenItsPodsFitElsewhereUnlessAPodMayNotBeDisrupted(Vertx vertx) throws Exception {
    cluster = ClusterFixture.start(vertx, kube, 2,
        pool -> disruption(pool, "WhenEmptyOrUnderutilized", "1s", null));
    String a = nodeFor(ClusterFixture.pending("big-0", "10"));
    String b = nodeFor(ClusterFixture.pending("big-1", "10"));
    Pod small = ClusterFixture.pending("small", "1");
    small.getMetadata().setAnnotations(Map.of("karpenter.sh/do-not-disrupt", "true"));
    cluster.bind(small, b);
    evictable("small");
    kube.pods().inNamespace("default").withName("big-1").delete(); // b keeps 1 cpu of work; a has 5.9 cpu free

    Thread.sleep(2_500);
    assertThat(claimOf(a)).isNotNull();
    assertThat(claimOf(b)).isNotNull();
    assertThat(evicted).isEmpty();

    kube.pods().inNamespace("default").withName("small").edit(p -> {
      p.getMetadata().setAnnotations(Map.of());
      return p;
    });
    Await.until("b consolidated away", () -> claimOf(b) == null);
    assertThat(evicted).containsExactly("small");
    assertThat(claimOf(a)).isNotNull(); // a holds big-0, which fits nowhere else
  }

  @Test
  void aDeletedNodeClaimsInstanceIsTerminatedEvenIfItsLaunchWasNeverRecorded(Vertx vertx) throws Exception {
    cluster = ClusterFixture.start(vertx, kube, 1, pool -> disruption(pool, "WhenEmpty", "Never", null));
    String node = nodeFor(ClusterFixture.pending("web", "1"));
    NodeClaim claim = claimOf(node);
    String instance = claim.getMetadata().getAnnotations().get("warmmetal.io/instance-id");
    // As if the controller had stopped between the launch and recording it on the claim.
    kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).edit(c -> {
      c.getMetadata().getAnnotations().remove("warmmetal.io/instance-id");
      return c;
    });
    kube.pods().inNamespace("default").withName("web").delete();
    kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).delete();

    Await.until("the claim gone", () -> kube.resources(NodeClaim.class).withName(claim.getMetadata().getName())
        .get() == null);
    assertThat(cluster.fx.db().preparedQuery("SELECT state FROM instances WHERE id = $1")
        .execute(io.vertx.sqlclient.Tuple.of(instance)).await().iterator().next().getString("state"))
        .isIn("shutting-down", "terminated");
  }
}
