package io.warmmetal.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass.PreJoined;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.NodeHost;
import io.warmmetal.e2e.cluster.RealCluster;
import io.warmmetal.protocol.testing.Await;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The whole product on real parts: a NodePool and a pending pod → the controller (as its
 * ServiceAccount) → the API → the real agent → its join script → kubeadm join → a real kubelet →
 * Node Ready → the pod Running in containerd; then scale to zero → consolidation drains and
 * terminates → the agent's reset (kubeadm reset, the kubelet's state gone) → prepared and warm
 * again → the next pod gets the same machine, joined a second time. And the same machine kept
 * pre-joined by the node class: joined for real ahead of time, then taken by a pending pod's
 * NodeClaim with no second join.
 */
@ExtendWith({VertxExtension.class, RealCluster.class})
@Tag("cluster")
class RealNodeTest {

  static Deployment web(int replicas) {
    return new DeploymentBuilder()
        .withNewMetadata()
        .withName("web")
        .withNamespace("default")
        .endMetadata()
        .withNewSpec()
        .withReplicas(replicas)
        .withNewSelector()
        .addToMatchLabels("app", "web")
        .endSelector()
        .withNewTemplate()
        .withNewMetadata()
        .addToLabels("app", "web")
        .endMetadata()
        .withNewSpec()
        .withTerminationGracePeriodSeconds(1L)
        .addNewContainer()
        .withName("web")
        .withImage(NodeHost.BUSYBOX_IMAGE)
        .withImagePullPolicy("Never")
        .withCommand("sleep", "3600")
        .withNewResources()
        .addToRequests("cpu", new Quantity("100m"))
        .addToRequests("memory", new Quantity("64Mi"))
        .endResources()
        .endContainer()
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  private static Pod runningPod(KubernetesClient kube, RealMachine machine, ApiFixture fx)
      throws InterruptedException {
    Pod[] found = new Pod[1];
    Await.until(
        "a web pod Running on a real node",
        () -> {
          kube.pods().inNamespace("default").withLabel("app", "web").list().getItems().stream()
              // Not one being deleted: the earlier replica's pod stays, Running, until the pod
              // garbage collector removes it from its deleted node.
              .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
              .filter(p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase()))
              .findFirst()
              .ifPresent(p -> found[0] = p);
          if (found[0] == null && "failed".equals(machine.state(fx))) {
            throw new AssertionError("the machine failed: " + machine.story(fx));
          }
          return found[0] != null;
        },
        180_000);
    return found[0];
  }

  /** The machine reset for real (kubeadm reset, the kubelet's state gone), prepared and warm. */
  private static void awaitWarmAgain(ApiFixture fx, RealMachine machine)
      throws InterruptedException {
    Await.until(
        "the machine reset and warm again",
        () -> {
          if ("failed".equals(machine.state(fx))) {
            throw new AssertionError("reset failed: " + machine.story(fx));
          }
          return "warm".equals(machine.state(fx));
        },
        120_000);
  }

  /** The join's result reaches the API from the agent, on its own time after the node is Ready. */
  private static void awaitInstanceRunning(ApiFixture fx, RealMachine machine)
      throws InterruptedException {
    Await.until(
        "the instance running",
        () ->
            fx.count(
                    "SELECT count(*) FROM instances WHERE state = 'running' AND machine_id = $1",
                    machine.machineId)
                == 1,
        60_000,
        () -> machine.story(fx));
  }

  @Test
  void aPendingPodGetsARealNodeThatResetsToWarmAndIsJoinedAgain(Vertx vertx, ControlPlane cluster)
      throws Exception {
    KubernetesClient kube = cluster.admin();
    // Closed in reverse: the machine (its kubelet) before the cluster is cleaned, the API last.
    try (ApiFixture fx = ApiFixture.start(vertx, RealMachine.apiSettings(cluster));
        Installation wm =
            Installation.install(
                cluster,
                "http://127.0.0.1:" + fx.api.port(),
                fx.token("client"),
                pool -> {
                  pool.getSpec().disruption = new NodePool.Disruption();
                  pool.getSpec().disruption.consolidationPolicy = "WhenEmpty";
                  pool.getSpec().disruption.consolidateAfter = "1s";
                  pool.getSpec().template.metadata.annotations =
                      Map.of("example.com/owner", "ml-platform");
                });
        RealMachine machine = RealMachine.start(fx, cluster, "metal-1")) {
      wm.startController();
      kube.apps().deployments().inNamespace("default").resource(web(1)).create();

      Pod pod = runningPod(kube, machine, fx);
      assertThat(pod.getSpec().getNodeName()).isEqualTo("metal-1");
      Node node = kube.nodes().withName("metal-1").get();
      assertThat(node.getSpec().getProviderID()).isEqualTo("warmmetal://" + machine.machineId);
      // The labels a Karpenter node carries: set by the join (kubelet --node-labels) and by the
      // kubelet itself.
      assertThat(node.getMetadata().getLabels())
          .containsEntry("node.kubernetes.io/instance-type", machine.shape)
          .containsEntry("karpenter.sh/capacity-type", "on-demand")
          .containsEntry("karpenter.sh/nodepool", "default")
          .containsEntry("team", "ml")
          .containsEntry("kubernetes.io/arch", "amd64")
          .containsEntry("kubernetes.io/os", "linux")
          .containsEntry("kubernetes.io/hostname", "metal-1")
          .containsEntry("karpenter.sh/registered", "true")
          .containsEntry("karpenter.sh/initialized", "true");
      assertThat(node.getMetadata().getAnnotations())
          .containsEntry("example.com/owner", "ml-platform");
      assertThat(node.getMetadata().getOwnerReferences())
          .singleElement()
          .satisfies(
              o -> {
                assertThat(o.getKind()).isEqualTo("NodeClaim");
                assertThat(o.getUid())
                    .isEqualTo(
                        kube.resources(NodeClaim.class)
                            .list()
                            .getItems()
                            .get(0)
                            .getMetadata()
                            .getUid());
              });
      assertThat(node.getSpec().getTaints())
          .noneMatch(t -> t.getKey().equals("karpenter.sh/unregistered"));
      List<NodeClaim> claims = kube.resources(NodeClaim.class).list().getItems();
      assertThat(claims).hasSize(1);
      assertThat(Conditions.isTrue(claims.get(0).getStatus().conditions, Conditions.INITIALIZED))
          .isTrue();
      awaitInstanceRunning(fx, machine);

      // Scale to zero: the empty node is consolidated away, the machine reset for real and warm
      // again.
      kube.apps().deployments().inNamespace("default").withName("web").scale(0);
      Await.until(
          "the node gone",
          () ->
              kube.nodes().withName("metal-1").get() == null
                  && kube.resources(NodeClaim.class).list().getItems().isEmpty(),
          120_000);
      awaitWarmAgain(fx, machine);
      assertThat(machine.host.run("pgrep", "-x", "kubelet").ok())
          .as("a kubelet left running")
          .isFalse();
      assertThat(machine.host.run("test", "-e", "/etc/kubernetes/kubelet.conf").ok()).isFalse();
      assertThat(machine.host.run("test", "-e", "/var/lib/kubelet").ok()).isFalse();

      // The next pod reuses the machine: a second join of the same host.
      kube.apps().deployments().inNamespace("default").withName("web").scale(1);
      Pod again = runningPod(kube, machine, fx);
      assertThat(again.getSpec().getNodeName()).isEqualTo("metal-1");
      assertThat(again.getMetadata().getUid()).isNotEqualTo(pod.getMetadata().getUid());
      assertThat(
              fx.count("SELECT count(*) FROM instances WHERE machine_id = $1", machine.machineId))
          .isEqualTo(2);
      // The agent reports the join after the pod may already run: wait for that report, then
      // check the first instance did not come back with it.
      awaitInstanceRunning(fx, machine);
      assertThat(fx.count("SELECT count(*) FROM instances WHERE state = 'running'"))
          .as("running instances")
          .isEqualTo(1L);
    }
  }

  @Test
  void aRealMachinePreJoinedAheadOfTimeIsTakenByAPendingPodWithoutASecondJoin(
      Vertx vertx, ControlPlane cluster) throws Exception {
    KubernetesClient kube = cluster.admin();
    try (ApiFixture fx = ApiFixture.start(vertx, RealMachine.apiSettings(cluster));
        Installation wm =
            Installation.install(
                cluster, "http://127.0.0.1:" + fx.api.port(), fx.token("client"), pool -> {});
        RealMachine machine = RealMachine.start(fx, cluster, "metal-1")) {
      wm.updateNodeClass(
          c -> c.getSpec().preJoined = List.of(new PreJoined(machine.shape, 1, null)));
      wm.startController();

      // Joined for real ahead of time: kubeadm join and a real kubelet, the Node tainted standby
      // and no NodePool's.
      Await.until(
          "the machine pre-joined and its Node Ready",
          () -> {
            if ("failed".equals(machine.state(fx))) {
              throw new AssertionError("the pre-join failed: " + machine.story(fx));
            }
            Node n = kube.nodes().withName("metal-1").get();
            return "pre-joined".equals(machine.state(fx))
                && n != null
                && n.getStatus().getConditions().stream()
                    .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
          },
          180_000,
          () -> machine.story(fx));
      Node standby = kube.nodes().withName("metal-1").get();
      assertThat(standby.getMetadata().getLabels()).containsEntry(WellKnown.STANDBY, "default");
      assertThat(standby.getSpec().getTaints()).anyMatch(t -> WellKnown.STANDBY.equals(t.getKey()));
      assertThat(kube.resources(NodeClaim.class).list().getItems()).isEmpty();

      kube.apps().deployments().inNamespace("default").resource(web(1)).create();
      Pod pod = runningPod(kube, machine, fx);
      assertThat(pod.getSpec().getNodeName()).isEqualTo("metal-1");
      NodeClaim claim = kube.resources(NodeClaim.class).list().getItems().get(0);
      assertThat(claim.getMetadata().getAnnotations())
          .containsEntry(WellKnown.PRE_JOINED_ANNOTATION, "true");
      Node taken = kube.nodes().withName("metal-1").get();
      assertThat(taken.getMetadata().getLabels())
          .containsEntry(WellKnown.NODEPOOL_LABEL, "default")
          .doesNotContainKey(WellKnown.STANDBY);
      assertThat(taken.getSpec().getTaints()).noneMatch(t -> WellKnown.STANDBY.equals(t.getKey()));
      assertThat(
              fx.count(
                  "SELECT count(*) FROM commands WHERE machine_id = $1 AND type = 'join'",
                  machine.machineId))
          .as("joins of the machine: the one ahead of time only")
          .isEqualTo(1);
      assertThat(
              fx.count(
                  "SELECT count(*) FROM instances WHERE machine_id = $1 AND pre_joined"
                      + " AND state = 'running'",
                  machine.machineId))
          .isEqualTo(1);

      // No standby wanted any more, the pod gone: the node is given back and the machine reset.
      wm.updateNodeClass(c -> c.getSpec().preJoined = List.of());
      kube.apps().deployments().inNamespace("default").withName("web").delete();
      kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).delete();
      awaitWarmAgain(fx, machine);
    }
  }
}
