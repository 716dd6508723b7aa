package io.warmmetal.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.enrollment.AgentProcessTest;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.KubeBinaries;
import io.warmmetal.e2e.cluster.NodeImage;
import io.warmmetal.e2e.cluster.Rack;
import io.warmmetal.e2e.cluster.RealCluster;
import io.warmmetal.e2e.cluster.VirtualServer;
import io.warmmetal.protocol.testing.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The journey the product exists for, on virtual servers booted from WarmMetal's node image: power
 * on → the NIC's iPXE gets the API's boot URL from the rack's DHCP → kernel, initrd and layers from
 * the API → systemd, containerd → the agent enrolls with a boot token → its pool prepares it (the
 * shipped prepare script, for real) → warm; then a NodePool and pending pods → the controller → the
 * API → each server's agent → {@code kubeadm join} (the kubelet started by systemd) against the
 * real control plane → Ready nodes with Karpenter's labels → the pods Running on them; scale to
 * zero → consolidation drains and terminates → the agents reset their hosts (no reboot) → warm
 * again → the next pod reuses a machine. Then a second image version: the pool names it and reboots
 * its idle server into it (back through the network boot, enrolled again, prepared, warm); the node
 * class names it and the node still on the first image drifts ({@code ImageDrift}), is replaced on
 * the upgraded server and drained, and its server, reset, is ordered to reboot onto the new image
 * too. Two servers, so more than one real node joins the same control plane; a third with too
 * little RAM ends {@code failed} saying so, never warm.
 */
@ExtendWith({VertxExtension.class, RealCluster.class})
@Tag("cluster")
class JourneyTest {
  static final int SERVERS = 2;
  static final int MEMORY_MIB = 2048;
  static final int CPUS = 2;

  /** Below the image's WARMMETAL_MIN_MEMORY_MIB (1536): it boots, and its prepare refuses it. */
  static final int SMALL_MEMORY_MIB = 1024;

  /**
   * Pods that fill a 2-CPU node on their own, each running the image's pause (no registry to pull
   * from here).
   */
  static Deployment filler(int replicas) {
    String pause = "k8s.gcr.io/pause:" + KubeBinaries.pauseTag();
    return new DeploymentBuilder()
        .withNewMetadata()
        .withName("filler")
        .withNamespace("default")
        .endMetadata()
        .withNewSpec()
        .withReplicas(replicas)
        .withNewSelector()
        .addToMatchLabels("app", "filler")
        .endSelector()
        .withNewTemplate()
        .withNewMetadata()
        .addToLabels("app", "filler")
        .endMetadata()
        .withNewSpec()
        .withTerminationGracePeriodSeconds(1L)
        // One a server: kube-scheduler counts a 2-CPU server's whole allocatable, so without this
        // it may put both pods on the first node Ready (the controller plans one a node, keeping
        // room for the system) while the second server is still joining.
        .withNewAffinity()
        .withNewPodAntiAffinity()
        .addNewRequiredDuringSchedulingIgnoredDuringExecution()
        .withTopologyKey("kubernetes.io/hostname")
        .withNewLabelSelector()
        .addToMatchLabels("app", "filler")
        .endLabelSelector()
        .endRequiredDuringSchedulingIgnoredDuringExecution()
        .endPodAntiAffinity()
        .endAffinity()
        .addNewContainer()
        .withName("pause")
        .withImage(pause)
        .withImagePullPolicy("Never")
        .withNewResources()
        .addToRequests("cpu", new Quantity("1"))
        .addToRequests("memory", new Quantity("64Mi"))
        .endResources()
        .endContainer()
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  @Test
  void serversBootedFromTheImageBecomeNodesRunPodsResetAndRebootBackToWarm(
      Vertx vertx, ControlPlane cluster) throws Exception {
    KubernetesClient kube = cluster.admin();
    Path bootDir = Files.createTempDirectory("warmmetal-boot");
    String image = NodeImage.install(bootDir, AgentProcessTest.AGENT_JAR, null, true);
    List<VirtualServer> servers = new ArrayList<>();
    try (ApiFixture fx = ApiFixture.start(vertx, Rack.apiSettings(cluster, bootDir))) {
      try (Rack rack = Rack.forApi(cluster, fx);
          Installation wm =
              Installation.install(
                  cluster,
                  "http://127.0.0.1:" + fx.api.port(),
                  fx.token("client"),
                  pool -> {
                    pool.getSpec().disruption = new NodePool.Disruption();
                    pool.getSpec().disruption.consolidationPolicy = "WhenEmpty";
                    pool.getSpec().disruption.consolidateAfter = "1s";
                  })) {
        for (int i = 0; i < SERVERS; i++) {
          servers.add(VirtualServer.powerOn(rack, i + 1, MEMORY_MIB, CPUS, null));
        }
        VirtualServer small = VirtualServer.powerOn(rack, SERVERS + 1, SMALL_MEMORY_MIB, 1, null);
        RackServers fleet = new RackServers(fx, rack, servers);
        RackServers smallFleet = new RackServers(fx, rack, List.of(small));
        Map<VirtualServer, String> machines = fleet.awaitEnrolled();
        String smallMachine = smallFleet.awaitEnrolled().get(small);
        String shape = fleet.shapeOf(machines.get(servers.get(0)));
        fx.client.put(
            "/v1/pools/" + shape,
            ApiFixture.ADMIN,
            new JsonObject().put("minWarm", SERVERS).put("maxWarm", SERVERS));
        fx.client.put(
            "/v1/pools/" + fleet.shapeOf(smallMachine),
            ApiFixture.ADMIN,
            new JsonObject().put("minWarm", 1).put("maxWarm", 1));
        fleet.awaitAll("warm", machines.values());
        smallFleet.awaitAll("failed", List.of(smallMachine));
        assertThat(fx.client.get("/v1/events?machineId=" + smallMachine, ApiFixture.ADMIN).raw())
            .contains("a node needs at least 1536 MiB");
        small.close();
        for (String machine : machines.values()) {
          JsonObject facts =
              fx.client
                  .get("/v1/machines/" + machine, ApiFixture.ADMIN)
                  .body()
                  .getJsonObject("facts");
          assertThat(facts.getJsonObject("image").getString("version")).isEqualTo(image);
          assertThat(facts.getJsonObject("image").getString("kubernetesVersion"))
              .isEqualTo(ControlPlane.VERSION);
        }

        // Pending pods → the controller → the API → kubeadm join on each server → the pods Running
        // there.
        wm.startController();
        kube.apps().deployments().inNamespace("default").resource(filler(SERVERS)).create();
        List<Pod> running = fleet.awaitRunningPods(kube, "filler", SERVERS);
        Set<String> nodes =
            running.stream().map(p -> p.getSpec().getNodeName()).collect(Collectors.toSet());
        assertThat(nodes).hasSize(SERVERS);
        Set<String> providerIds = new HashSet<>();
        for (String nodeName : nodes) {
          Node node = kube.nodes().withName(nodeName).get();
          providerIds.add(node.getSpec().getProviderID());
          assertThat(node.getMetadata().getLabels())
              .containsEntry("node.kubernetes.io/instance-type", shape)
              .containsEntry("karpenter.sh/nodepool", "default")
              .containsEntry("karpenter.sh/capacity-type", "on-demand")
              .containsEntry("karpenter.sh/registered", "true")
              .containsEntry("karpenter.sh/initialized", "true")
              .containsEntry("team", "ml");
          assertThat(node.getStatus().getNodeInfo().getKubeletVersion())
              .isEqualTo(ControlPlane.VERSION);
          assertThat(node.getStatus().getNodeInfo().getContainerRuntimeVersion())
              .startsWith("containerd://");
        }
        assertThat(providerIds)
            .containsExactlyInAnyOrderElementsOf(
                machines.values().stream().map(m -> "warmmetal://" + m).toList());

        // Scale to zero: the empty nodes are consolidated away, the servers reset in place (no
        // reboot) and warm.
        kube.apps().deployments().inNamespace("default").withName("filler").scale(0);
        Await.until(
            "the nodes gone",
            () ->
                kube.nodes().list().getItems().isEmpty()
                    && kube.resources(NodeClaim.class).list().getItems().isEmpty(),
            300_000);
        fleet.awaitAll("warm", machines.values());
        assertThat(fleet.boots(servers.get(0))).as("reset without a reboot").isEqualTo(1);

        // The next pod reuses a machine: a second join of the same server.
        kube.apps().deployments().inNamespace("default").withName("filler").scale(1);
        Pod again = fleet.awaitRunningPods(kube, "filler", 1).get(0);
        String reused =
            kube.nodes()
                .withName(again.getSpec().getNodeName())
                .get()
                .getSpec()
                .getProviderID()
                .substring("warmmetal://".length());
        assertThat(fx.count("SELECT count(*) FROM instances WHERE machine_id = $1", reused))
            .isEqualTo(2);

        // A second image (it carries one more image archive): the pool reboots its idle server into
        // it.
        Path archives = KubeBinaries.buildTestImages(Files.createTempDirectory("warmmetal-images"));
        Files.delete(archives.resolve("pause.tar"));
        String next = NodeImage.install(bootDir, AgentProcessTest.AGENT_JAR, archives, false);
        assertThat(next).isNotEqualTo(image);
        VirtualServer idle =
            servers.stream().filter(s -> !machines.get(s).equals(reused)).findFirst().orElseThrow();
        String idleMachine = machines.get(idle);
        fx.client.put(
            "/v1/pools/" + shape,
            ApiFixture.ADMIN,
            new JsonObject().put("minWarm", 1).put("maxWarm", SERVERS).put("image", next));
        Await.until(
            "the idle server rebooted onto " + next,
            () -> fleet.boots(idle) == 2,
            RackServers.BOOT_MILLIS,
            () -> fleet.story(idleMachine));
        fleet.awaitAll("warm", List.of(idleMachine));
        assertThat(fleet.image(idleMachine)).isEqualTo(next);
        assertThat(
                fx
                    .client
                    .get("/v1/machines/" + idleMachine + "/commands", ApiFixture.ADMIN)
                    .body()
                    .getJsonArray("items")
                    .stream()
                    .map(c -> (JsonObject) c)
                    .filter(c -> "reboot".equals(c.getString("type")))
                    .map(c -> c.getString("status"))
                    .toList())
            .containsExactly("succeeded");

        // The node class names it too: the node on the first image drifts, is replaced on the
        // upgraded server and
        // drained; its server is reset and rebooted onto the new image as well.
        kube.resources(WarmMetalNodeClass.class)
            .withName("default")
            .edit(
                nc -> {
                  nc.getSpec().image = next;
                  return nc;
                });
        Await.until(
            "the node on " + image + " drifted",
            () ->
                kube.resources(NodeClaim.class).list().getItems().stream()
                    .anyMatch(
                        c ->
                            c.getStatus() != null
                                && Conditions.isTrue(c.getStatus().conditions, Conditions.DRIFTED)
                                && "ImageDrift"
                                    .equals(
                                        Conditions.get(c.getStatus().conditions, Conditions.DRIFTED)
                                            .getReason())),
            120_000,
            () -> fleet.story(null));
        Await.until(
            "the pod running on the upgraded server",
            () -> {
              List<Pod> pods =
                  kube
                      .pods()
                      .inNamespace("default")
                      .withLabel("app", "filler")
                      .list()
                      .getItems()
                      .stream()
                      .filter(
                          p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase()))
                      .toList();
              return pods.size() == 1
                  && kube.nodes().withName(pods.get(0).getSpec().getNodeName()).get() != null
                  && ("warmmetal://" + idleMachine)
                      .equals(
                          kube.nodes()
                              .withName(pods.get(0).getSpec().getNodeName())
                              .get()
                              .getSpec()
                              .getProviderID());
            },
            RackServers.BOOT_MILLIS,
            () -> fleet.story(null));
        // (Its pool reboots it next, as it did the idle one: that boot is not waited for.)
        Await.until(
            "the replaced server reset and its reboot onto " + next + " ordered",
            () -> "rebooting".equals(fleet.machine(reused).getString("state")),
            RackServers.BOOT_MILLIS,
            () -> fleet.story(reused));
        assertThat(kube.resources(NodeClaim.class).list().getItems())
            .singleElement()
            .satisfies(c -> assertThat(c.getStatus().imageID).isEqualTo(next));
      }
    } finally {
      servers.forEach(VirtualServer::close);
    }
  }
}
