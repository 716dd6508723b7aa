package io.warmmetal.api.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.commands.SimulatedKubelet;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.agent.fleet.SimulatedAgent;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.Await;
import io.warmmetal.controller.Controller;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeClassReference;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.provisioning.Conditions;
import io.warmmetal.controller.scheduling.Resources;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Pending pod → Node Ready, end to end: the real controller on fabric8's mock API server (CRUD; the test plays
 * kube-scheduler's part by marking pods unschedulable), the real WarmMetal API on PostgreSQL, and simulated agents
 * whose simulated kubelets register the Nodes.
 */
@ExtendWith(VertxExtension.class)
@EnableKubernetesMockClient(crud = true)
class ProvisioningTest {
  KubernetesClient kube;
  private ApiFixture fx;
  private Controller controller;
  private KubernetesClient controllerClient;
  private final List<SimulatedAgent> agents = new ArrayList<>();
  private Enrollment enrollment;
  private WebSocketClient ws;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
    URI port = URI.create("https://127.0.0.1:" + fx.api.agentPort());
    enrollment = new Enrollment(vertx, port, fx.api.caPin());
    ws = vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
    String token = fx.client.post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject().put("uses", 10))
        .body().getString("token");
    for (int i = 0; i < 3; i++) {
      JsonObject facts = ApiFixture.facts(16, 64);
      String name = "sim-node-" + i;
      JsonObject machine = new JsonObject().put("name", name).put("facts", facts)
          .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
      SimulatedKubelet kubelet = new SimulatedKubelet(vertx, new SimulatedExecutor(vertx, Map.of("prepare",
          Distribution.parse("fixed:20ms"), "join", Distribution.parse("fixed:50ms")), 0.0, new Random(i)),
          kube, name, facts);
      agents.add(SimulatedAgent.start(vertx, enrollment, ws, port, token, machine,
          Files.createTempDirectory("sim"), kubelet).await());
    }
    fx.client.put("/v1/pools/x86-16c-64g", ApiFixture.ADMIN, new JsonObject().put("minWarm", 3).put("maxWarm", 3));
    Await.until("three warm machines", () -> fx.count("SELECT count(*) FROM machines WHERE state = 'warm'") == 3);

    for (String crd : new String[] {"nodepools.karpenter.sh-v1.yml", "nodeclaims.karpenter.sh-v1.yml",
        "warmmetalnodeclasses.warmmetal.io-v1.yml"}) {
      try (InputStream in = getClass().getClassLoader().getResourceAsStream("META-INF/fabric8/" + crd)) {
        kube.apiextensions().v1().customResourceDefinitions()
            .resource(Serialization.unmarshal(in, CustomResourceDefinition.class)).create();
      }
    }
    kube.secrets().inNamespace("warmmetal-system").resource(new SecretBuilder().withNewMetadata()
        .withName("warmmetal-credentials").withNamespace("warmmetal-system").endMetadata()
        .withStringData(Map.of("token", fx.token("client"))).build()).create();
    WarmMetalNodeClass nodeClass = new WarmMetalNodeClass();
    nodeClass.getMetadata().setName("default");
    nodeClass.getSpec().endpoint = "http://127.0.0.1:" + fx.api.port();
    nodeClass.getSpec().credentialsSecretRef = new WarmMetalNodeClass.SecretKeyRef();
    nodeClass.getSpec().credentialsSecretRef.name = "warmmetal-credentials";
    nodeClass.getSpec().credentialsSecretRef.namespace = "warmmetal-system";
    nodeClass.getSpec().join.apiServer = "10.0.0.1:6443";
    nodeClass.getSpec().join.caCertHash = "sha256:" + "ab".repeat(32);
    kube.resources(WarmMetalNodeClass.class).resource(nodeClass).create();
    NodePool pool = new NodePool();
    pool.getMetadata().setName("default");
    pool.getSpec().template.metadata.labels = Map.of("team", "ml");
    pool.getSpec().template.spec.nodeClassRef = new NodeClassReference();
    pool.getSpec().template.spec.nodeClassRef.group = "warmmetal.io";
    pool.getSpec().template.spec.nodeClassRef.kind = "WarmMetalNodeClass";
    pool.getSpec().template.spec.nodeClassRef.name = "default";
    kube.resources(NodePool.class).resource(pool).create();

    startController();
  }

  /** A controller with a client of its own, so stopping it closes its watches before the mock server goes. */
  private void startController() {
    controllerClient = new io.fabric8.kubernetes.client.KubernetesClientBuilder()
        .withConfig(kube.getConfiguration()).build();
    controller = new Controller(controllerClient, Duration.ofMillis(20), Resources.of(100, 256L << 20));
    controller.start();
  }

  private void stopController() {
    controller.close();
    controllerClient.close();
  }

  @AfterEach
  void stop() {
    stopController();
    agents.forEach(a -> a.stop().await());
    ws.close().await();
    enrollment.close().await();
    fx.close();
  }

  private static Pod pending(String name, String cpu) {
    return new PodBuilder().withNewMetadata().withName(name).withNamespace("default").endMetadata()
        .withNewSpec().addNewContainer().withName("app").withImage("busybox").withNewResources()
        .addToRequests("cpu", new Quantity(cpu)).addToRequests("memory", new Quantity("1Gi")).endResources()
        .endContainer().endSpec()
        .withNewStatus().withConditions(new PodConditionBuilder().withType("PodScheduled").withStatus("False")
            .withReason("Unschedulable").build()).endStatus()
        .build();
  }


  @Test
  void aPendingPodBecomesAReadyNodeFromTheWarmPool() throws Exception {
    kube.pods().inNamespace("default").resource(pending("web-1", "2")).create();

    Await.until("a NodeClaim initialized", () -> kube.resources(NodeClaim.class).list().getItems().stream()
        .anyMatch(c -> c.getStatus() != null && Conditions.isTrue(c.getStatus().conditions, Conditions.INITIALIZED)));
    List<NodeClaim> claims = kube.resources(NodeClaim.class).list().getItems();
    assertThat(claims).hasSize(1);
    NodeClaim claim = claims.get(0);
    assertThat(Conditions.isTrue(claim.getStatus().conditions, Conditions.LAUNCHED)).isTrue();
    assertThat(Conditions.isTrue(claim.getStatus().conditions, Conditions.REGISTERED)).isTrue();
    assertThat(claim.getStatus().providerID).startsWith("warmmetal://m-");

    Node node = kube.nodes().withName(claim.getStatus().nodeName).get();
    assertThat(node.getSpec().getProviderID()).isEqualTo(claim.getStatus().providerID);
    assertThat(node.getMetadata().getLabels()).containsEntry("karpenter.sh/nodepool", "default")
        .containsEntry("team", "ml").containsEntry("node.kubernetes.io/instance-type", "x86-16c-64g");
    assertThat(node.getSpec().getTaints()).noneMatch(t -> t.getKey().equals("karpenter.sh/unregistered"));

    // The launch used the NodeClaim's UID as client token: the API holds exactly one instance for it.
    assertThat(fx.count("SELECT count(*) FROM launches WHERE client_token = $1", claim.getMetadata().getUid()))
        .isEqualTo(1);
    assertThat(fx.count("SELECT count(*) FROM instances WHERE state = 'running'")).isEqualTo(1);
  }

  @Test
  void aBurstOfPodsGetsTheRightNumberOfNodes() throws Exception {
    for (int i = 0; i < 20; i++) {
      kube.pods().inNamespace("default").resource(pending("batch-" + i, "1500m")).create();
    }
    // 20 × 1.5 cpu = 30 cpu; a 16-cpu node holds 10 such pods next to its DaemonSets: 2 nodes, not 20.
    Await.until("two NodeClaims initialized", () -> kube.resources(NodeClaim.class).list().getItems().stream()
        .filter(c -> c.getStatus() != null && Conditions.isTrue(c.getStatus().conditions, Conditions.INITIALIZED))
        .count() == 2);
    Thread.sleep(300); // nothing more follows
    assertThat(kube.resources(NodeClaim.class).list().getItems()).hasSize(2);
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(2);
  }

  @Test
  void aControllerThatLostItsLaunchRecordLaunchesNothingTwice() throws Exception {
    kube.pods().inNamespace("default").resource(pending("web-2", "1")).create();
    Await.until("launched", () -> kube.resources(NodeClaim.class).list().getItems().stream()
        .anyMatch(c -> c.getStatus() != null && Conditions.isTrue(c.getStatus().conditions, Conditions.LAUNCHED)));
    // A controller that crashed after the API launched but before it recorded so: the claim looks unlaunched. The
    // controller keeps no launch state in memory, so the next pass sees what a restarted controller would.
    NodeClaim claim = kube.resources(NodeClaim.class).list().getItems().get(0);
    String provider = claim.getStatus().providerID;
    claim.getStatus().conditions.clear();
    claim.getStatus().providerID = null;
    kube.resources(NodeClaim.class).resource(claim).updateStatus();
    controller.trigger();
    Await.until("launched again", () -> {
      NodeClaim c = kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).get();
      return c.getStatus() != null && Conditions.isTrue(c.getStatus().conditions, Conditions.LAUNCHED);
    });
    NodeClaim relaunched = kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).get();
    assertThat(relaunched.getStatus().providerID).isEqualTo(provider); // the same instance, replayed by its token
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(1);
  }

  @Test
  void aShapeWithoutMachinesByLaunchTimeFallsBackToTheNextAcceptableOne() throws Exception {
    // The 8-cpu shape looks warm and is cheaper, but its one machine is cordoned: the launch cannot have it.
    String small = fx.registerMachines(1, ApiFixture.facts(8, 32), true).get(0);
    fx.client.post("/v1/machines/" + small + "/cordon", ApiFixture.ADMIN, null);
    kube.pods().inNamespace("default").resource(pending("small-1", "1")).create();

    Await.until("a NodeClaim initialized", () -> kube.resources(NodeClaim.class).list().getItems().stream()
        .anyMatch(c -> c.getStatus() != null && Conditions.isTrue(c.getStatus().conditions, Conditions.INITIALIZED)));
    NodeClaim claim = kube.resources(NodeClaim.class).list().getItems().get(0);
    assertThat(claim.getSpec().requirements.stream().filter(r -> r.getKey().equals("node.kubernetes.io/instance-type"))
        .findFirst().orElseThrow().getValues()).startsWith("x86-8c-32g").contains("x86-16c-64g");
    assertThat(claim.getMetadata().getLabels()).containsEntry("node.kubernetes.io/instance-type", "x86-16c-64g");
    assertThat(fx.count("SELECT count(*) FROM instances WHERE shape = 'x86-16c-64g'")).isEqualTo(1);
  }

  @Test
  void aNodeThatNeverRegistersIsGivenUpAfterTheNodeClassTimeout(Vertx vertx) throws Exception {
    // One more machine, of another shape, whose agent joins but has no kubelet: its Node never appears.
    String token = fx.client.post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject()).body()
        .getString("token");
    JsonObject machine = new JsonObject().put("name", "silent").put("facts", ApiFixture.facts(8, 32))
        .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
    agents.add(SimulatedAgent.start(vertx, enrollment, ws, URI.create("https://127.0.0.1:" + fx.api.agentPort()),
        token, machine, Files.createTempDirectory("sim"), new SimulatedExecutor(vertx, Map.of(), 0.0,
            new Random(9))).await());
    fx.client.put("/v1/pools/x86-8c-32g", ApiFixture.ADMIN, new JsonObject().put("minWarm", 1).put("maxWarm", 1));
    Await.until("the silent machine warm", () -> fx.count(
        "SELECT count(*) FROM machines WHERE shape = 'x86-8c-32g' AND state = 'warm'") == 1);
    WarmMetalNodeClass nodeClass = kube.resources(WarmMetalNodeClass.class).withName("default").get();
    nodeClass.getSpec().registrationTimeout = "2s";
    kube.resources(WarmMetalNodeClass.class).resource(nodeClass).update();

    Pod pod = pending("small-2", "1");
    pod.getSpec().setNodeSelector(Map.of("node.kubernetes.io/instance-type", "x86-8c-32g"));
    kube.pods().inNamespace("default").resource(pod).create();
    Await.until("launched on the silent machine", () -> fx.count(
        "SELECT count(*) FROM instances WHERE shape = 'x86-8c-32g'") == 1);
    String silent = fx.db().query("SELECT id FROM machines WHERE name = 'silent'").execute().await().iterator()
        .next().getString("id");
    List<String> claimOnSilent = new ArrayList<>();
    Await.until("the claim records its launch", () -> {
      kube.resources(NodeClaim.class).list().getItems().stream().filter(c -> c.getStatus() != null
          && ("warmmetal://" + silent).equals(c.getStatus().providerID)).forEach(c -> claimOnSilent.add(
              c.getMetadata().getName()));
      return !claimOnSilent.isEmpty();
    });
    // Given up: that claim is deleted and its instance terminated (the pod is then planned again, as in Karpenter).
    Await.until("the late claim given up", () -> kube.resources(NodeClaim.class)
        .withName(claimOnSilent.get(0)).get() == null);
    assertThat(fx.count("SELECT count(*) FROM instances WHERE machine_id = $1 AND state IN ('shutting-down',"
        + " 'terminated')", silent)).isGreaterThanOrEqualTo(1);
  }
}
