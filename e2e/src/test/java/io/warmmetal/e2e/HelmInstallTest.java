package io.warmmetal.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.InstallCommand;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.pgclient.PgConnectOptions;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.api.db.Database;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.TcpProxy;
import io.warmmetal.api.testing.TestDatabase;
import io.warmmetal.controller.instances.BootstrapTokens;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.RealCluster;
import io.warmmetal.protocol.testing.Await;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
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
  private static final Path API_IMAGE =
      CHART.resolve("../../../api/target/jib-image.tar").normalize().toAbsolutePath();
  private static final String IN_CLUSTER_ADMIN = "helm-installed-admin-token-0123456789";

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
      try {
        joinAsSystemNode(fx, cluster, system, CONTROLLER_IMAGE);

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
          install(kube, cluster)
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
          upgrade(cluster, "controller.batchIdle", "PT0.01S");
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
      } finally {
        takeDown(kube, cluster);
      }
    }
  }

  @Test
  void theChartsApiRunsInTheClusterOnItsDatabaseAndKeepsItsCaAcrossAnUpgrade(
      Vertx vertx, ControlPlane cluster) throws Exception {
    KubernetesClient kube = cluster.admin();
    assertThat(API_IMAGE).as("built by the cluster tier's package (-Pimages)").exists();
    String url = TestDatabase.freshDatabaseUrl();
    PgConnectOptions database = Database.connectOptions(url);
    String address = cluster.network().hostAddress();
    Path ca = Files.createTempDirectory("warmmetal-ca");
    CertificateAuthority.ensure(ca.resolve("ca.crt"), ca.resolve("ca.key"));
    try (ApiFixture fx = ApiFixture.start(vertx, RealMachine.apiSettings(cluster));
        // The API's pod reaches the test's PostgreSQL from the cluster's network.
        TcpProxy postgres = TcpProxy.start(vertx, address, database.getHost(), database.getPort());
        RealMachine system = RealMachine.start(fx, cluster, "system")) {
      try {
        joinAsSystemNode(fx, cluster, system, API_IMAGE);
        String inCluster =
            url.replace(
                "@" + database.getHost() + ":" + database.getPort() + "/",
                "@" + address + ":" + postgres.port() + "/");
        install(kube, cluster)
            .set("controller.enabled", "false")
            .set("api.replicas", "1")
            .set("api.hostNetwork", "true")
            .set("api.strategy.rollingUpdate.maxUnavailable", "1")
            .set("api.strategy.rollingUpdate.maxSurge", "0")
            .set("api.database.url", inCluster)
            .set("api.adminToken", IN_CLUSTER_ADMIN)
            .set("api.secretKey", Base64.getEncoder().encodeToString(new byte[32]))
            .set("api.agents.names[0]", cluster.network().address())
            .setFile("api.ca.cert", ca.resolve("ca.crt"))
            .setFile("api.ca.key", ca.resolve("ca.key"))
            .call();
        String apiUrl = "http://" + cluster.network().address() + ":8080";
        Pod first = apiPod(kube, null, apiUrl);
        Map<String, String> caSecret = caSecret(kube);

        upgrade(cluster, "api.logFormat", "text");
        Pod second = apiPod(kube, first.getMetadata().getName(), apiUrl);
        assertThat(second.getMetadata().getName()).isNotEqualTo(first.getMetadata().getName());
        assertThat(caSecret(kube)).as("the agents' CA, kept by the upgrade").isEqualTo(caSecret);
        // The new replica's agents' port presents a certificate of that CA (agents trust only it).
        assertThat(agentPortTrusts(cluster.network().address(), ca.resolve("ca.crt"))).isTrue();

        Helm.uninstall("warmmetal")
            .withNamespace(NAMESPACE)
            .withKubeConfig(cluster.adminKubeconfig())
            .call();
      } finally {
        takeDown(kube, cluster);
      }
    }
  }

  /**
   * Joins the machine as a node of no NodePool, as a cluster's system nodes are — a launch of its
   * own through the API (no NodeClaim), with a bootstrap token the test makes — with {@code image}
   * in its containerd.
   */
  private static void joinAsSystemNode(
      ApiFixture fx, ControlPlane cluster, RealMachine system, Path image) throws Exception {
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
    // The image the chart runs, as a node without a registry has it: imported into its containerd.
    assertThat(system.host.run("ctr", "-n", "k8s.io", "images", "import", image.toString()).ok())
        .as("%s imported", image)
        .isTrue();
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

  /**
   * The only API pod, Ready — once it is not {@code not} (the one an upgrade replaced) — answering
   * an admin's {@code GET /v1/machines} on its port.
   */
  private static Pod apiPod(KubernetesClient kube, String not, String apiUrl)
      throws InterruptedException {
    HttpClient http = HttpClient.newHttpClient();
    Pod[] found = new Pod[1];
    Await.until(
        "one API pod Ready" + (not == null ? "" : ", not " + not) + ", answering " + apiUrl,
        () -> {
          List<Pod> pods =
              kube.pods().inNamespace(NAMESPACE).list().getItems().stream()
                  .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                  .toList();
          if (pods.size() != 1 || pods.get(0).getMetadata().getName().equals(not)) {
            return false;
          }
          found[0] = pods.get(0);
          boolean ready =
              found[0].getStatus().getConditions() != null
                  && found[0].getStatus().getConditions().stream()
                      .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True"));
          try {
            return ready
                && http.send(
                            HttpRequest.newBuilder(URI.create(apiUrl + "/v1/machines"))
                                .header("Authorization", "Bearer " + IN_CLUSTER_ADMIN)
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                            HttpResponse.BodyHandlers.discarding())
                        .statusCode()
                    == 200;
          } catch (IOException e) {
            return false;
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
          }
        },
        240_000,
        () -> logs(kube));
    return found[0];
  }

  /** The agents' CA Secret's data. */
  private static Map<String, String> caSecret(KubernetesClient kube) {
    return kube.secrets().inNamespace(NAMESPACE).withName("warmmetal-ca").get().getData();
  }

  /**
   * Whether a TLS client trusting only {@code caCert} completes a handshake with the agents' port.
   */
  private static boolean agentPortTrusts(String host, Path caCert) throws Exception {
    KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
    trusted.load(null, null);
    try (InputStream in = Files.newInputStream(caCert)) {
      trusted.setCertificateEntry(
          "ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory trust =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(trusted);
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(null, trust.getTrustManagers(), null);
    try (SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket(host, 8443)) {
      socket.setSoTimeout(10_000);
      socket.startHandshake();
      return true;
    } catch (SSLException refused) {
      return false;
    }
  }

  /**
   * {@code helm install warmmetal} into the controller's namespace, once another test's
   * kubectl-style install (deploy/'s objects, which Helm will not adopt) is out of the way.
   */
  private static InstallCommand install(KubernetesClient kube, ControlPlane cluster)
      throws Exception {
    Installation.removeManifests(kube);
    return new Helm(CHART)
        .install()
        .withName("warmmetal")
        .withNamespace(NAMESPACE)
        .createNamespace()
        .withKubeConfig(cluster.adminKubeconfig());
  }

  /** {@code helm upgrade warmmetal --reuse-values --set name=value}. */
  private static void upgrade(ControlPlane cluster, String name, String value) {
    new Helm(CHART)
        .upgrade()
        .withName("warmmetal")
        .withNamespace(NAMESPACE)
        .withKubeConfig(cluster.adminKubeconfig())
        .reuseValues()
        .set(name, value)
        .call();
  }

  /**
   * Leaves the shared control plane as the test found it, whatever happened: the release gone (if
   * still there), then the cluster emptied (Nodes, claims, leases, tokens).
   */
  private static void takeDown(KubernetesClient kube, ControlPlane cluster) {
    try {
      Helm.uninstall("warmmetal")
          .withNamespace(NAMESPACE)
          .withKubeConfig(cluster.adminKubeconfig())
          .ignoreNotFound()
          .call();
    } finally {
      Cleaner.clean(kube);
    }
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
