package io.warmmetal.api.controller;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonObject;
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
import java.util.function.Consumer;

/**
 * A cluster for the controller's end-to-end tests: fabric8's mock API server (CRUD; no scheduler, no kubelet — the
 * tests play kube-scheduler), the CRDs, the real WarmMetal API on PostgreSQL with {@code agents} simulated agents of
 * shape {@code x86-16c-64g} whose simulated kubelets register real Node objects, a node class and a NodePool named
 * {@code default}, and the real controller.
 */
public final class ClusterFixture implements AutoCloseable {
  public static final String SHAPE = "x86-16c-64g";
  final KubernetesClient kube;
  final ApiFixture fx;
  final List<SimulatedAgent> agents = new ArrayList<>();
  final Enrollment enrollment;
  final WebSocketClient ws;
  final URI agentPort;
  private Controller controller;
  private KubernetesClient controllerClient;

  private ClusterFixture(Vertx vertx, KubernetesClient kube) throws Exception {
    this.kube = kube;
    this.fx = ApiFixture.start(vertx);
    this.agentPort = URI.create("https://127.0.0.1:" + fx.api.agentPort());
    this.enrollment = new Enrollment(vertx, agentPort, fx.api.caPin());
    this.ws = vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
  }

  /** The cluster with {@code agents} warm machines and a NodePool adjusted by {@code pool}, controller running. */
  static ClusterFixture start(Vertx vertx, KubernetesClient kube, int agents, Consumer<NodePool> pool)
      throws Exception {
    ClusterFixture c = new ClusterFixture(vertx, kube);
    String token = c.fx.client.post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject().put("uses", 100))
        .body().getString("token");
    for (int i = 0; i < agents; i++) {
      JsonObject facts = ApiFixture.facts(16, 64);
      String name = "sim-node-" + i;
      JsonObject machine = new JsonObject().put("name", name).put("facts", facts)
          .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
      SimulatedKubelet kubelet = new SimulatedKubelet(vertx, new SimulatedExecutor(vertx, Map.of("prepare",
          Distribution.parse("fixed:20ms"), "join", Distribution.parse("fixed:50ms"), "reset",
          Distribution.parse("fixed:20ms")), 0.0, new Random(i)), new io.warmmetal.agent.commands.SimulatedNodes(kube), name, facts);
      c.agents.add(SimulatedAgent.start(vertx, c.enrollment, c.ws, c.agentPort, token, machine,
          Files.createTempDirectory("sim"), kubelet).await());
    }
    c.fx.client.put("/v1/pools/" + SHAPE, ApiFixture.ADMIN, new JsonObject().put("minWarm", agents)
        .put("maxWarm", agents));
    Await.until(agents + " warm machines", () -> c.warm() == agents);

    install(kube, "http://127.0.0.1:" + c.fx.api.port(), c.fx.token("client"), pool);
    c.startController();
    return c;
  }

  /**
   * What a cluster gets to use WarmMetal: the CRDs, the credentials Secret, a node class for the API at
   * {@code endpoint} and a NodePool {@code default} (adjusted by {@code pool}).
   */
  public static void install(KubernetesClient kube, String endpoint, String clientToken, Consumer<NodePool> pool)
      throws Exception {
    for (String crd : new String[] {"nodepools.karpenter.sh-v1.yml", "nodeclaims.karpenter.sh-v1.yml",
        "warmmetalnodeclasses.warmmetal.io-v1.yml"}) {
      try (InputStream in = ClusterFixture.class.getClassLoader().getResourceAsStream("META-INF/fabric8/" + crd)) {
        kube.apiextensions().v1().customResourceDefinitions()
            .resource(Serialization.unmarshal(in, CustomResourceDefinition.class)).create();
      }
    }
    kube.secrets().inNamespace("warmmetal-system").resource(new SecretBuilder().withNewMetadata()
        .withName("warmmetal-credentials").withNamespace("warmmetal-system").endMetadata()
        .withStringData(Map.of("token", clientToken)).build()).create();
    WarmMetalNodeClass nodeClass = new WarmMetalNodeClass();
    nodeClass.getMetadata().setName("default");
    nodeClass.getSpec().endpoint = endpoint;
    nodeClass.getSpec().credentialsSecretRef = new WarmMetalNodeClass.SecretKeyRef();
    nodeClass.getSpec().credentialsSecretRef.name = "warmmetal-credentials";
    nodeClass.getSpec().credentialsSecretRef.namespace = "warmmetal-system";
    nodeClass.getSpec().join.apiServer = "10.0.0.1:6443";
    nodeClass.getSpec().join.caCertHash = "sha256:" + "ab".repeat(32);
    kube.resources(WarmMetalNodeClass.class).resource(nodeClass).create();
    NodePool nodePool = new NodePool();
    nodePool.getMetadata().setName("default");
    nodePool.getSpec().template.metadata.labels = Map.of("team", "ml");
    nodePool.getSpec().template.spec.nodeClassRef = new NodeClassReference();
    nodePool.getSpec().template.spec.nodeClassRef.group = "warmmetal.io";
    nodePool.getSpec().template.spec.nodeClassRef.kind = "WarmMetalNodeClass";
    nodePool.getSpec().template.spec.nodeClassRef.name = "default";
    pool.accept(nodePool);
    kube.resources(NodePool.class).resource(nodePool).create();
  }

  /** A controller with a client of its own, so stopping it closes its watches before the mock server goes. */
  void startController() {
    controllerClient = new KubernetesClientBuilder().withConfig(new io.fabric8.kubernetes.client.ConfigBuilder(
        kube.getConfiguration()).withUserAgent(Controller.USER_AGENT).build()).build();
    controller = new Controller(controllerClient, new Controller.Settings(Duration.ofMillis(10), Duration.ofMillis(100),
        Resources.of(100, 256L << 20), 8));
    controller.start();
  }

  void trigger() {
    controller.trigger();
  }

  long warm() {
    return fx.count("SELECT count(*) FROM machines WHERE state = 'warm'");
  }

  /** A pod kube-scheduler has found no node for. */
  public static Pod pending(String name, String cpu) {
    return new PodBuilder().withNewMetadata().withName(name).withNamespace("default").endMetadata()
        .withNewSpec().addNewContainer().withName("app").withImage("busybox").withNewResources()
        .addToRequests("cpu", new Quantity(cpu)).addToRequests("memory", new Quantity("1Gi")).endResources()
        .endContainer().endSpec()
        .withNewStatus().withConditions(new PodConditionBuilder().withType("PodScheduled").withStatus("False")
            .withReason("Unschedulable").build()).endStatus()
        .build();
  }

  /** Plays kube-scheduler and the kubelet: binds the pod to the node and reports it Ready. */
  Pod bind(Pod pod, String node) {
    pod.getSpec().setNodeName(node);
    pod.getStatus().setConditions(List.of(
        new PodConditionBuilder().withType("PodScheduled").withStatus("True").build(),
        new PodConditionBuilder().withType("Ready").withStatus("True").build()));
    return kube.pods().inNamespace(pod.getMetadata().getNamespace()).resource(pod).createOr(
        op -> op.update());
  }

  List<NodeClaim> claims() {
    return kube.resources(NodeClaim.class).list().getItems();
  }

  List<NodeClaim> initialized() {
    return claims().stream().filter(c -> c.getStatus() != null
        && Conditions.isTrue(c.getStatus().conditions, Conditions.INITIALIZED)).toList();
  }

  /** The node the pod's NodeClaim became, once there is one initialized claim more than {@code before}. */
  String awaitNewNode(List<String> before) throws InterruptedException {
    List<String> found = new ArrayList<>();
    Await.until("a new node initialized", () -> {
      initialized().stream().map(c -> c.getStatus().nodeName).filter(n -> !before.contains(n)).findFirst()
          .ifPresent(found::add);
      return !found.isEmpty();
    });
    return found.get(0);
  }

  List<String> nodeNames() {
    return initialized().stream().map(c -> c.getStatus().nodeName).toList();
  }

  void updatePool(Consumer<NodePool> change) {
    NodePool pool = kube.resources(NodePool.class).withName("default").get();
    change.accept(pool);
    kube.resources(NodePool.class).resource(pool).update();
    controller.trigger();
  }

  @Override
  public void close() {
    // Quiet first: with no pods left the controller stops launching, so its watches close with few events in flight
    // (fabric8's mock server blocks its event loop while a closing watch drains its events).
    try {
      kube.pods().inAnyNamespace().delete();
      Thread.sleep(300);
    } catch (Exception e) {
      // closing anyway
    }
    controller.close();
    controllerClient.close();
    agents.forEach(a -> a.stop().await());
    ws.close().await();
    enrollment.close().await();
    fx.close();
  }
}
