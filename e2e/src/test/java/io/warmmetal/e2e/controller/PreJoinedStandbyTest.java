package io.warmmetal.e2e.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.controller.buffers.CapacityBuffer;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass.PreJoined;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass.PreJoinedStatus;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.RealCluster;
import io.warmmetal.protocol.testing.Await;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Pre-joined standby nodes (a node class's {@code spec.preJoined}) on a real control plane: the
 * controller keeps machines joined ahead of time as tainted Nodes of no NodePool; a pending pod's
 * NodeClaim takes one without a join (the Node relabelled, its standby taint lifted, the claim
 * Registered and Initialized at once) and another joins behind it; the standby follows its count,
 * replaces a node whose kubelet died, says when machines are short, and survives a restart.
 */
@ExtendWith({VertxExtension.class, RealCluster.class})
@Tag("cluster")
class PreJoinedStandbyTest {
  private Fleet cluster;
  private KubernetesClient kube;
  private ApiFixture fx;

  private void start(Vertx vertx, ControlPlane controlPlane, int machines, int standby)
      throws Exception {
    cluster =
        Fleet.start(
            vertx,
            controlPlane,
            Collections.nCopies(
                machines, new JsonObject().put("topology.kubernetes.io/zone", "rack-1")),
            pool -> {},
            nodeClass ->
                nodeClass.getSpec().preJoined =
                    standby == 0 ? List.of() : List.of(new PreJoined(Fleet.SHAPE, standby, null)));
    kube = cluster.kube;
    fx = cluster.fx;
  }

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aPendingPodTakesAPreJoinedNodeWithoutAJoinAndAnotherJoinsBehindIt(
      Vertx vertx, ControlPlane controlPlane) throws Exception {
    start(vertx, controlPlane, 2, 1);
    Node standby = awaitStandbyNodes(1).get(0);
    assertThat(standby.getSpec().getTaints())
        .extracting(Taint::getKey, Taint::getEffect)
        .contains(tuple(WellKnown.STANDBY, "NoSchedule"), tuple(WellKnown.STANDBY, "NoExecute"));
    assertThat(cluster.claims()).as("a standby node belongs to no NodePool").isEmpty();
    awaitPreJoined(1);
    Await.until(
        "the node class's status counting it",
        () -> {
          PreJoinedStatus status = standbyStatus();
          return status != null && status.ready == 1;
        });
    String machine = standby.getSpec().getProviderID().substring("warmmetal://".length());
    assertThat(joins(machine)).isEqualTo(1);

    cluster.create(Fleet.pod("web-1", "2"));
    assertThat(cluster.awaitScheduled("web-1"))
        .as("the pod runs on the node that was standing by")
        .isEqualTo(standby.getMetadata().getName());
    NodeClaim claim = awaitClaimOf(standby.getMetadata().getName());
    assertThat(claim.getStatus().providerID).isEqualTo(standby.getSpec().getProviderID());
    assertThat(claim.getMetadata().getAnnotations())
        .containsEntry(WellKnown.PRE_JOINED_ANNOTATION, "true");
    Await.until(
        "the claim initialized",
        () ->
            Conditions.isTrue(
                kube.resources(NodeClaim.class)
                    .withName(claim.getMetadata().getName())
                    .get()
                    .getStatus()
                    .conditions,
                Conditions.INITIALIZED));
    Node taken = kube.nodes().withName(standby.getMetadata().getName()).get();
    assertThat(taken.getMetadata().getLabels())
        .containsEntry(WellKnown.NODEPOOL_LABEL, "default")
        .containsEntry(WellKnown.NODECLAIM_LABEL, claim.getMetadata().getName())
        .doesNotContainKey(WellKnown.STANDBY);
    assertThat(taken.getSpec().getTaints()).noneMatch(t -> WellKnown.STANDBY.equals(t.getKey()));
    assertThat(taken.getMetadata().getOwnerReferences())
        .anyMatch(o -> claim.getMetadata().getUid().equals(o.getUid()));
    assertThat(joins(machine)).as("no second join of the machine").isEqualTo(1);
    JsonObject instance =
        fx.client
            .get(
                "/v1/instances?labelSelector="
                    + WellKnown.NODECLAIM_UID_LABEL
                    + "%3D"
                    + claim.getMetadata().getUid(),
                ApiFixture.ADMIN)
            .body()
            .getJsonArray("items")
            .getJsonObject(0);
    assertThat(instance.getBoolean("preJoined")).isTrue();
    assertThat(instance.getString("state")).isEqualTo("running");

    // Another machine joins in its place.
    Node replacement = awaitStandbyNodes(1).get(0);
    assertThat(replacement.getMetadata().getName()).isNotEqualTo(standby.getMetadata().getName());
    assertThat(machinesGivenTwice()).as("machines in two live instances").isZero();
  }

  @Test
  void theStandbyFollowsItsCountReplacesADeadNodeAndSaysWhenMachinesAreShort(
      Vertx vertx, ControlPlane controlPlane) throws Exception {
    start(vertx, controlPlane, 3, 2);
    List<Node> standby = awaitStandbyNodes(2);

    // A kubelet that dies: its Node NotReady; after the controller's grace the machine is reset and
    // a standby node joined again.
    Node dead = standby.get(0);
    cluster.kubelets.remove(dead.getMetadata().getName());
    Fleet.retrying(
        () ->
            kube.nodes()
                .withName(dead.getMetadata().getName())
                .editStatus(
                    n -> {
                      for (NodeCondition c : n.getStatus().getConditions()) {
                        if ("Ready".equals(c.getType())) {
                          c.setStatus("False");
                          c.setReason("KubeletNotReady");
                          c.setLastTransitionTime(Instant.now().toString());
                        }
                      }
                      return n;
                    }));
    String deadMachine = dead.getSpec().getProviderID().substring("warmmetal://".length());
    Await.until(
        "the dead node's standby instance terminated",
        () ->
            fx.count(
                    "SELECT count(*) FROM instances WHERE machine_id = $1 AND standby AND state = 'terminated'",
                    deadMachine)
                == 1,
        90_000);
    Await.until(
        "two standby nodes Ready again",
        () -> {
          cluster.trigger();
          return readyStandbyInstances() == 2;
        },
        90_000);
    assertThat(cluster.controllerEvent("PreJoinedReplaced", "default")).isTrue();

    // More than the machines there are: as many as can be, and the status says why not more.
    cluster.updateNodeClass(
        c -> c.getSpec().preJoined = List.of(new PreJoined(Fleet.SHAPE, 5, null)));
    Await.until(
        "the shortfall in the node class's status",
        () -> {
          PreJoinedStatus status = standbyStatus();
          return status != null
              && status.desired == 5
              && status.message != null
              && status.message.contains("InsufficientCapacity");
        });
    assertThat(cluster.controllerEvent("PreJoinedInsufficientCapacity", "default")).isTrue();
    assertThat(machinesGivenTwice()).isZero();

    // None: every standby instance terminated, their machines warm again and their Nodes gone.
    cluster.updateNodeClass(c -> c.getSpec().preJoined = List.of());
    Await.until(
        "no standby instance left",
        () ->
            fx.count("SELECT count(*) FROM instances WHERE standby AND state <> 'terminated'")
                == 0);
    Await.until("every machine warm", () -> cluster.warm() == 3);
    Await.until(
        "the standby Nodes deleted",
        () -> {
          cluster.trigger();
          return standbyNodes().isEmpty();
        },
        90_000);
  }

  @Test
  void aRestartedControllerKeepsTheSameStandbyAndTwoClaimsNeverShareIt(
      Vertx vertx, ControlPlane controlPlane) throws Exception {
    start(vertx, controlPlane, 3, 1);
    Node standby = awaitStandbyNodes(1).get(0);
    awaitPreJoined(1);
    cluster.restartController();
    cluster.awaitPasses(3);
    assertThat(fx.count("SELECT count(*) FROM instances WHERE standby AND state <> 'terminated'"))
        .as("the restarted controller counts the same standby instance")
        .isEqualTo(1);

    // Two pods that each need a whole node, at once: one claim takes the standby node, the other a
    // warm machine with a join.
    cluster.create(Fleet.pod("big-1", "12"));
    cluster.create(Fleet.pod("big-2", "12"));
    String first = cluster.awaitScheduled("big-1");
    String second = cluster.awaitScheduled("big-2");
    assertThat(first).isNotEqualTo(second);
    assertThat(List.of(first, second)).contains(standby.getMetadata().getName());
    assertThat(machinesGivenTwice()).isZero();
  }

  @Test
  void aPreJoinedCapacityBufferKeepsItsRoomAsStandbyNodesThatAPodTakesAndThatAreReplenished(
      Vertx vertx, ControlPlane controlPlane) throws Exception {
    start(vertx, controlPlane, 3, 0);
    // Two chunks of 12 CPU, as upstream's buffers are written, with WarmMetal's strategy: two
    // 16-CPU nodes kept joined ahead of time, not NodePool nodes.
    kube.resource(
            Serialization.<HasMetadata>unmarshal(
                """
                apiVersion: v1
                kind: PodTemplate
                metadata: {name: big-chunk, namespace: default}
                template:
                  spec:
                    containers:
                      - {name: app, image: app, resources: {requests: {cpu: "12", memory: 1Gi}}}
                """))
        .create();
    kube.resource(
            Serialization.<HasMetadata>unmarshal(
                """
                apiVersion: autoscaling.x-k8s.io/v1beta1
                kind: CapacityBuffer
                metadata: {name: standing-by, namespace: default}
                spec:
                  provisioningStrategy: warmmetal.io/pre-joined
                  podTemplateRef: {name: big-chunk}
                  replicas: 2
                """))
        .create();
    awaitStandbyNodes(2);
    awaitPreJoined(2);
    assertThat(cluster.claims()).isEmpty();
    Await.until(
        "the buffer provisioned as pre-joined standby",
        () -> {
          CapacityBuffer b =
              kube.resources(CapacityBuffer.class)
                  .inNamespace("default")
                  .withName("standing-by")
                  .get();
          return b.getStatus() != null
              && Conditions.isTrue(b.getStatus().conditions, CapacityBuffer.PROVISIONING);
        });

    assertThat(fx.count("SELECT count(*) FROM instances WHERE standby AND state <> 'running'"))
        .as("no standby node retired while the buffer still asks for it")
        .isZero();

    // A pod that needs a whole node takes one of them without a join; the buffer's room is
    // joined again behind it.
    cluster.create(Fleet.pod("big-1", "12"));
    String node = cluster.awaitScheduled("big-1");
    // The claim of the pod's node, whatever other claims there are.
    assertThat(awaitClaimOf(node).getMetadata().getAnnotations())
        .as("the pod's node was standing by: its claim took it pre-joined")
        .containsEntry(WellKnown.PRE_JOINED_ANNOTATION, "true");
    Await.until(
        "two standby nodes again",
        () -> {
          cluster.trigger();
          return readyStandbyInstances() == 2;
        },
        60_000);
    assertThat(machinesGivenTwice()).isZero();

    // The buffer gone: so is its standby.
    kube.resources(CapacityBuffer.class).inNamespace("default").withName("standing-by").delete();
    Await.until(
        "no standby instance left",
        () -> {
          cluster.trigger();
          return fx.count("SELECT count(*) FROM instances WHERE standby AND state <> 'terminated'")
              == 0;
        });
  }

  /**
   * Waits for the API to count {@code n} pre-joined machines: a machine is pre-joined once its
   * join's result reaches the API, which may be after its Node is Ready.
   */
  private void awaitPreJoined(int n) throws InterruptedException {
    Await.until(
        "the pool counting " + n + " pre-joined machine(s)",
        () ->
            fx.client
                    .get("/v1/pools/" + Fleet.SHAPE, ApiFixture.ADMIN)
                    .body()
                    .getInteger("preJoined")
                == n);
  }

  /** The node class's status of its one {@code preJoined} entry, once it has one. */
  private PreJoinedStatus standbyStatus() {
    var status = kube.resources(WarmMetalNodeClass.class).withName("default").get().getStatus();
    return status == null || status.preJoined == null || status.preJoined.size() != 1
        ? null
        : status.preJoined.get(0);
  }

  /** The NodeClaim of the Node, once its registration records it. */
  private NodeClaim awaitClaimOf(String node) throws InterruptedException {
    Await.until("a NodeClaim of " + node, () -> cluster.claimOf(node) != null);
    return cluster.claimOf(node);
  }

  /** Join commands queued for the machine (a pre-joined machine taken gets none). */
  private long joins(String machine) {
    return fx.count(
        "SELECT count(*) FROM commands WHERE machine_id = $1 AND type = 'join'", machine);
  }

  /** Machines in more than one live instance: a machine given twice. */
  private long machinesGivenTwice() {
    return fx.count(
        "SELECT count(*) FROM (SELECT machine_id FROM instances WHERE state IN ('pending', 'running')"
            + " GROUP BY machine_id HAVING count(*) > 1) twice");
  }

  /** Standby instances running whose Node is Ready. */
  private long readyStandbyInstances() {
    List<String> machines = new ArrayList<>();
    fx.db()
        .query("SELECT machine_id FROM instances WHERE standby AND state = 'running'")
        .execute()
        .await()
        .forEach(r -> machines.add("warmmetal://" + r.getString(0)));
    return kube.nodes().list().getItems().stream()
        .filter(n -> machines.contains(n.getSpec().getProviderID()))
        .filter(PreJoinedStandbyTest::ready)
        .count();
  }

  private static boolean ready(Node n) {
    return n.getStatus().getConditions().stream()
        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  private List<Node> standbyNodes() {
    return kube.nodes().withLabel(WellKnown.STANDBY).list().getItems();
  }

  private List<Node> readyStandbyNodes() {
    return standbyNodes().stream().filter(PreJoinedStandbyTest::ready).toList();
  }

  /** Waits for {@code n} Ready standby Nodes of the node class {@code default}. */
  private List<Node> awaitStandbyNodes(int n) throws InterruptedException {
    Await.until(
        n + " standby node(s) Ready",
        () -> {
          cluster.trigger();
          return readyStandbyNodes().stream()
                  .filter(
                      node ->
                          "default".equals(node.getMetadata().getLabels().get(WellKnown.STANDBY)))
                  .count()
              >= n;
        },
        60_000);
    return readyStandbyNodes();
  }
}
