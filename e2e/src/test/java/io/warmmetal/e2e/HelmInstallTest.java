package io.warmmetal.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Helm;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.TcpProxy;
import io.warmmetal.controller.instances.BootstrapTokens;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.RealCluster;
import io.warmmetal.protocol.testing.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The chart installed for real, as a platform team would: the controller image the build makes,
 * imported into a node's containerd; {@code helm install} (Helm as a library) with the API outside
 * the cluster; the controller running as a pod under its ServiceAccount, winning its Lease, and
 * provisioning a real node for a pending pod through the API; {@code helm upgrade} with a changed
 * value rolling it to a new pod that takes the Lease over (one handover, never two holders); the
 * NodePool deleted and its node drained and terminated by the controller; {@code helm uninstall}
 * leaving no NodeClaim, and no finalizer, behind.
 *
 * <p>The test cluster runs no kube-proxy: the chart's {@code controller.hostNetwork} and {@code
 * controller.env} point the controller at the API server's address, as on a cluster whose pods
 * cannot reach the kubernetes Service.
 */
@ExtendWith({VertxExtension.class, RealCluster.class})
@Tag("cluster")
class HelmInstallTest {
  private static final Path CHART =
      Files.isDirectory(Path.of("..", "deploy"))
          ? Path.of("..", "deploy", "helm", "warmmetal")
          : Path.of("deploy", "helm", "warmmetal");
  private static final Path CONTROLLER_IMAGE =
      CHART.resolve("../../../controller/target/jib-image.tar").normalize().toAbsolutePath();
  private static final String NAMESPACE = Installation.NAMESPACE;
  private static final String SIM_SHAPE = "x86-16c-64g";

  @Test
  void theChartsControllerProvisionsANodeRollsOnUpgradeAndUninstallsClean(
      Vertx vertx, ControlPlane cluster) throws Exception {
    KubernetesClient kube = cluster.admin();
    assertThat(CONTROLLER_IMAGE).as("built by the cluster tier's package (-Pimages)").exists();
    try (ApiFixture fx = ApiFixture.start(vertx, RealMachine.apiSettings(cluster));
        // The controller's pod reaches the API from the cluster's network, as the agents do.
        TcpProxy api =
            TcpProxy.start(vertx, cluster.network().hostAddress(), "127.0.0.1", fx.api.port());
        RealMachine system = RealMachine.start(fx, cluster, "system")) {
      joinAsSystemNode(fx, cluster, system);
      assertThat(
              system
                  .host
                  .run("ctr", "-n", "k8s.io", "images", "import", CONTROLLER_IMAGE.toString())
                  .ok())
          .isTrue();

      try (SimulatedMachines machines =
          new SimulatedMachines(vertx, kube, fx, cluster.network().hostAddress())) {
        machines.add(vertx, 1, ApiFixture.facts(16, 64), "sim-node-", true, new JsonObject());
        fx.client.put(
            "/v1/pools/" + SIM_SHAPE,
            ApiFixture.ADMIN,
            new JsonObject().put("minWarm", 1).put("maxWarm", 1));
        Await.until("the simulated machine warm", () -> warm(fx) == 1);
        String endpoint = "http://" + cluster.network().hostAddress() + ":" + api.port();
        String[] apiServer = cluster.endpoint().split(":");
        new Helm(CHART)
            .install()
            .withName("warmmetal")
            .withNamespace(NAMESPACE)
            .createNamespace()
            .withKubeConfig(cluster.adminKubeconfig())
            .set("api.enabled", "false")
            .set("controller.replicas", "1")
            .set("controller.hostNetwork", "true")
            .set("controller.env.KUBERNETES_SERVICE_HOST", apiServer[0])
            .set("controller.env.KUBERNETES_SERVICE_PORT", apiServer[1])
            .call();
        Installation.installFleet(
            kube,
            endpoint,
            fx.token("client"),
            cluster.endpoint(),
            cluster.caCertHash(),
            pool -> {
              pool.getSpec().disruption = new NodePool.Disruption();
              pool.getSpec().disruption.consolidationPolicy = "WhenEmpty";
              pool.getSpec().disruption.consolidateAfter = "1s";
            });

        Pod first = leader(kube, null);
        assertThat(first.getSpec().getNodeName()).isEqualTo("system");
        String firstHolder = lease(kube).getSpec().getHolderIdentity();

        // A pending pod only a NodePool's node takes: the pod controller provisions one (a
        // simulated
        // machine's: the real kubelet of this tier is the system node's, one per cluster).
        kube.apps()
            .deployments()
            .inNamespace("default")
            .resource(onNodePool(RealNodeTest.web(1)))
            .create();
        Await.until(
            "the web pod Running on sim-node-0",
            () ->
                kube
                    .pods()
                    .inNamespace("default")
                    .withLabel("app", "web")
                    .list()
                    .getItems()
                    .stream()
                    .anyMatch(
                        p ->
                            "sim-node-0".equals(p.getSpec().getNodeName())
                                && "Running".equals(p.getStatus().getPhase())),
            240_000,
            () -> logs(kube));

        // Upgrade with a changed value: a new pod, one handover of the Lease.
        int transitions = lease(kube).getSpec().getLeaseTransitions();
        new Helm(CHART)
            .upgrade()
            .withName("warmmetal")
            .withNamespace(NAMESPACE)
            .withKubeConfig(cluster.adminKubeconfig())
            .reuseValues()
            .set("controller.batchIdle", "PT0.01S")
            .call();
        Pod second = leader(kube, firstHolder);
        assertThat(second.getMetadata().getName()).isNotEqualTo(first.getMetadata().getName());
        assertThat(second.getSpec().getContainers().get(0).getEnv())
            .anySatisfy(
                e -> {
                  assertThat(e.getName()).isEqualTo("WARMMETAL_CONTROLLER_BATCH_IDLE");
                  assertThat(e.getValue()).isEqualTo("PT0.01S");
                });
        assertThat(lease(kube).getSpec().getLeaseTransitions()).isEqualTo(transitions + 1);

        // Taken down as documented: the NodePool first (its node drained and terminated by the
        // controller, the machine reset), then the release.
        kube.apps().deployments().inNamespace("default").withName("web").delete();
        kube.resources(NodePool.class).withName("default").delete();
        Await.until(
            "the NodePool's claims and node gone",
            () ->
                kube.resources(NodeClaim.class).list().getItems().isEmpty()
                    && kube.nodes().withName("sim-node-0").get() == null,
            180_000,
            () -> logs(kube));
        Helm.uninstall("warmmetal")
            .withNamespace(NAMESPACE)
            .withKubeConfig(cluster.adminKubeconfig())
            .call();
        Await.until(
            "the controller's pods gone",
            () -> kube.pods().inNamespace(NAMESPACE).list().getItems().isEmpty(),
            120_000);
        assertThat(kube.resources(NodeClaim.class).list().getItems()).isEmpty();
        Await.until("the machine warm again", () -> warm(fx) == 1, 120_000);
      }
    }
  }

  /**
   * Joins the machine as a node of no NodePool, as a cluster's system nodes are: a launch of its
   * own through the API (no NodeClaim), with a bootstrap token the test makes.
   */
  private static void joinAsSystemNode(ApiFixture fx, ControlPlane cluster, RealMachine system)
      throws Exception {
    String token = BootstrapTokens.forClaim(cluster.admin(), "system-node", Duration.ofHours(1));
    JsonObject launched =
        fx.client
            .post(
                "/v1/instances",
                ApiFixture.ADMIN,
                new JsonObject()
                    .put("shape", system.shape)
                    .put(
                        "kubernetes",
                        new JsonObject()
                            .put("apiServer", cluster.endpoint())
                            .put("caCertHash", cluster.caCertHash())
                            .put("bootstrapToken", token)))
            .body();
    assertThat(launched.getJsonArray("instances").getJsonObject(0).getString("machineId"))
        .isEqualTo(system.machineId);
    Await.until(
        "the system node Ready",
        () -> {
          var node = cluster.admin().nodes().withName("system").get();
          return node != null
              && node.getStatus().getConditions().stream()
                  .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True"));
        },
        180_000,
        () -> system.story(fx) + "\n" + system.host.kubeletLogTail());
  }

  /** Warm machines of the simulated shape. */
  private static long warm(ApiFixture fx) {
    return fx.count("SELECT count(*) FROM machines WHERE state = 'warm' AND shape = $1", SIM_SHAPE);
  }

  /** {@code web} held to the NodePool's nodes: the system node never takes it. */
  private static Deployment onNodePool(Deployment web) {
    web.getSpec()
        .getTemplate()
        .getSpec()
        .setNodeSelector(Map.of("karpenter.sh/nodepool", "default"));
    return web;
  }

  /** The controller's Lease. */
  private static Lease lease(KubernetesClient kube) {
    List<Lease> leases = kube.leases().inNamespace(NAMESPACE).list().getItems();
    assertThat(leases).hasSize(1);
    return leases.get(0);
  }

  /**
   * The only controller pod, Ready, once the Lease has a holder other than {@code notHolder} (the
   * replica an upgrade replaced; with the node's network a holder is named by the node's host name
   * and a random suffix, not by its pod).
   */
  private static Pod leader(KubernetesClient kube, String notHolder) throws InterruptedException {
    Pod[] found = new Pod[1];
    Await.until(
        "one controller pod Ready, the Lease held"
            + (notHolder == null ? "" : " by another than " + notHolder),
        () -> {
          List<Pod> pods =
              kube.pods().inNamespace(NAMESPACE).list().getItems().stream()
                  .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                  .toList();
          List<Lease> leases = kube.leases().inNamespace(NAMESPACE).list().getItems();
          if (pods.size() != 1 || leases.size() != 1) {
            return false;
          }
          found[0] = pods.get(0);
          String holder = leases.get(0).getSpec().getHolderIdentity();
          return found[0].getStatus().getConditions() != null
              && found[0].getStatus().getConditions().stream()
                  .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True"))
              && holder != null
              && !holder.equals(notHolder);
        },
        240_000,
        () -> logs(kube));
    return found[0];
  }

  /** The controller pods' logs, for a failure's message. */
  private static String logs(KubernetesClient kube) {
    StringBuilder out = new StringBuilder();
    for (Pod pod : kube.pods().inNamespace(NAMESPACE).list().getItems()) {
      out.append("--- ").append(pod.getMetadata().getName()).append(' ').append(pod.getStatus());
      try {
        String log =
            kube.pods()
                .inNamespace(NAMESPACE)
                .withName(pod.getMetadata().getName())
                .tailingLines(40)
                .getLog();
        out.append('\n').append(log);
      } catch (RuntimeException e) {
        out.append(" (no log: ").append(e.getMessage()).append(')');
      }
      out.append('\n');
    }
    return out.toString();
  }
}
