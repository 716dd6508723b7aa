package io.warmmetal.e2e.controller;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.warmmetal.api.db.Database;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.TcpProxy;
import io.warmmetal.api.testing.TestDatabase;
import io.warmmetal.controller.Controller;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.e2e.Installation;
import io.warmmetal.e2e.SimulatedMachines;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.fleet.kubelet.SimulatedNodes;
import io.warmmetal.protocol.testing.Await;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The controller's end-to-end world on a real control plane: the real WarmMetal API on PostgreSQL
 * with simulated agents of shape {@code x86-16c-64g} whose simulated kubelets register Nodes in the
 * real cluster (kept alive, their pods run), WarmMetal installed as {@code deploy/} ships it with a
 * NodePool {@code default}, and the real controller running as its ServiceAccount. kube-scheduler
 * binds the pods; nothing here plays it.
 */
final class Fleet implements AutoCloseable {
  static final String SHAPE = "x86-16c-64g";
  final KubernetesClient kube;
  final ApiFixture fx;

  /**
   * The API's link to its database: a test cuts it for an outage (the API answers 503 with
   * Retry-After meanwhile) and restores it.
   */
  final TcpProxy database;

  final Installation installation;
  final SimulatedMachines machines;
  final SimulatedNodes kubelets;
  private Controller controller;

  /** What the controller counts: Karpenter's metrics, as its endpoint would serve them. */
  final KarpenterMetrics metrics = new KarpenterMetrics();

  private Fleet(
      Vertx vertx,
      ControlPlane cluster,
      ApiFixture fx,
      TcpProxy database,
      Installation installation) {
    this.kube = cluster.admin();
    this.fx = fx;
    this.database = database;
    this.installation = installation;
    this.machines = new SimulatedMachines(vertx, kube, fx, "127.0.0.1");
    this.kubelets = machines.kubelets;
  }

  /** Where the fleet's machines stand: racks are zones, the room a region. */
  static final JsonObject RACK_1 =
      new JsonObject()
          .put("topology.kubernetes.io/zone", "rack-1")
          .put("topology.kubernetes.io/region", "room-1");

  /**
   * {@code agents} warm machines, WarmMetal installed (the NodePool adjusted by {@code pool}), the
   * controller up.
   */
  static Fleet start(Vertx vertx, ControlPlane cluster, int agents, Consumer<NodePool> pool)
      throws Exception {
    return start(vertx, cluster, Collections.nCopies(agents, RACK_1), pool, nodeClass -> {});
  }

  /**
   * One warm machine per entry of {@code machines}, labelled so (where it stands), WarmMetal
   * installed (the NodePool adjusted by {@code pool}, the node class by {@code nodeClass}), the
   * controller up.
   */
  static Fleet start(
      Vertx vertx,
      ControlPlane cluster,
      List<JsonObject> machines,
      Consumer<NodePool> pool,
      Consumer<WarmMetalNodeClass> nodeClass)
      throws Exception {
    int agents = machines.size();
    String url = TestDatabase.freshDatabaseUrl();
    var target = Database.connectOptions(url);
    TcpProxy database = TcpProxy.start(vertx, target.getHost(), target.getPort());
    ApiFixture fx;
    try {
      fx =
          ApiFixture.start(
              vertx,
              Map.of(
                  "WARMMETAL_DATABASE_URL",
                  url.replace(
                      "@" + target.getHost() + ":" + target.getPort() + "/",
                      "@127.0.0.1:" + database.port() + "/")));
    } catch (Exception e) {
      database.close();
      throw e;
    }
    Fleet f;
    try {
      f =
          new Fleet(
              vertx,
              cluster,
              fx,
              database,
              Installation.install(
                  cluster, "http://127.0.0.1:" + fx.api.port(), fx.token("client"), pool));
    } catch (Exception e) {
      fx.close();
      database.close();
      throw e;
    }
    try {
      for (JsonObject labels : new LinkedHashSet<>(machines)) {
        f.addAgents(
            vertx,
            Collections.frequency(machines, labels),
            ApiFixture.facts(16, 64),
            "sim-node-",
            true,
            labels);
      }
      retrying(
          () ->
              f.kube
                  .resources(WarmMetalNodeClass.class)
                  .withName("default")
                  .edit(
                      c -> {
                        nodeClass.accept(c);
                        return c;
                      }));
      f.fx.client.put(
          "/v1/pools/" + SHAPE,
          ApiFixture.ADMIN,
          new JsonObject().put("minWarm", agents).put("maxWarm", agents));
      Await.until(agents + " warm machines", () -> f.warm() == agents);
      f.controller = f.installation.startController(f.metrics);
      return f;
    } catch (Exception e) {
      f.close();
      throw e;
    }
  }

  /**
   * Enrolls {@code n} simulated agents of {@code facts}; with {@code kubelet}, their joins register
   * Nodes.
   */
  void addAgents(Vertx vertx, int n, JsonObject facts, String prefix, boolean kubelet)
      throws Exception {
    addAgents(vertx, n, facts, prefix, kubelet, new JsonObject());
  }

  /** As above, the machines labelled (their enrollment token's labels): a zone and region, say. */
  void addAgents(
      Vertx vertx, int n, JsonObject facts, String prefix, boolean kubelet, JsonObject labels)
      throws Exception {
    machines.add(vertx, n, facts, prefix, kubelet, labels);
  }

  void trigger() {
    controller.trigger();
  }

  /**
   * Waits until the controller has run {@code n} whole passes after now (the one under way may have
   * begun before, so one more is counted), asking for each at once rather than waiting for its 5 s
   * timer. What those passes would have done — a launch, a disruption, an eviction — is done after
   * this.
   */
  void awaitPasses(int n) throws InterruptedException {
    long target = controller.passesFinished() + n + 1;
    Await.until(
        n + " controller passes",
        () -> {
          if (controller.passesFinished() >= target) {
            return true;
          }
          controller.trigger(); // folds into the pass asked for already, if one is
          return false;
        });
  }

  /**
   * Whether the controller (not kube-scheduler) has published a {@code reason} event about {@code
   * object}.
   */
  boolean controllerEvent(String reason, String object) {
    return kube.v1().events().inAnyNamespace().list().getItems().stream()
        .anyMatch(
            e ->
                reason.equals(e.getReason())
                    && object.equals(e.getInvolvedObject().getName())
                    && e.getSource() != null
                    && Recorder.COMPONENT.equals(e.getSource().getComponent()));
  }

  /**
   * Waits until the controller has decided about {@code pod}: it found it no node (its
   * FailedScheduling event), or the pod was bound to one (then the test's assertion says what
   * should not have been).
   */
  void awaitDecided(String pod) throws InterruptedException {
    Await.until(
        "the controller finds " + pod + " no node",
        () -> controllerEvent("FailedScheduling", pod) || bound(pod),
        30_000,
        () ->
            "events: "
                + kube.v1().events().inAnyNamespace().list().getItems().stream()
                    .map(
                        e ->
                            e.getSource().getComponent()
                                + " "
                                + e.getReason()
                                + " "
                                + e.getInvolvedObject().getName()
                                + ": "
                                + e.getMessage())
                    .toList());
  }

  long warm() {
    return fx.count("SELECT count(*) FROM machines WHERE state = 'warm'");
  }

  /**
   * A pod asking for {@code cpu} and 1 GiB; kube-scheduler finds it no node until the controller
   * makes one.
   */
  static Pod pod(String name, String cpu) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("default")
        .endMetadata()
        .withNewSpec()
        .withTerminationGracePeriodSeconds(0L)
        .addNewContainer()
        .withName("app")
        .withImage("busybox")
        .withNewResources()
        .addToRequests("cpu", new Quantity(cpu))
        .addToRequests("memory", new Quantity("1Gi"))
        .endResources()
        .endContainer()
        .endSpec()
        .build();
  }

  Pod create(Pod pod) {
    return kube.pods().inNamespace("default").resource(pod).create();
  }

  private boolean bound(String pod) {
    Pod p = kube.pods().inNamespace("default").withName(pod).get();
    return p != null && p.getSpec().getNodeName() != null;
  }

  /** The node kube-scheduler bound the pod to, once it did. */
  String awaitScheduled(String pod) throws InterruptedException {
    String[] node = new String[1];
    Await.until(
        pod + " scheduled",
        () -> {
          Pod p = kube.pods().inNamespace("default").withName(pod).get();
          node[0] = p == null ? null : p.getSpec().getNodeName();
          return node[0] != null;
        });
    return node[0];
  }

  List<NodeClaim> claims() {
    return kube.resources(NodeClaim.class).list().getItems();
  }

  List<NodeClaim> initialized() {
    return claims().stream()
        .filter(
            c ->
                c.getStatus() != null
                    && Conditions.isTrue(c.getStatus().conditions, Conditions.INITIALIZED))
        .toList();
  }

  NodeClaim claimOf(String node) {
    return claims().stream()
        .filter(c -> c.getStatus() != null && node.equals(c.getStatus().nodeName))
        .findFirst()
        .orElse(null);
  }

  void updatePool(Consumer<NodePool> change) {
    retrying(
        () ->
            kube.resources(NodePool.class)
                .withName("default")
                .edit(
                    pool -> {
                      change.accept(pool);
                      return pool;
                    }));
    controller.trigger();
  }

  void updateNodeClass(Consumer<WarmMetalNodeClass> change) {
    installation.updateNodeClass(change);
    controller.trigger();
  }

  /** Stops the controller and starts another, as a restart or a change of leader does. */
  void restartController() throws InterruptedException {
    controller.close();
    controller = installation.startController(metrics);
  }

  /**
   * A read-modify-write, again while the API server answers 409 Conflict: the controller writes the
   * same objects, and a real API server guards every update by its resourceVersion.
   */
  static void retrying(Runnable change) {
    for (int attempt = 1; ; attempt++) {
      try {
        change.run();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 10) {
          throw e;
        }
      }
    }
  }

  @Override
  public void close() {
    machines.stopAgents();
    installation.close(); // the controller first, then the cluster emptied
    machines.close();
    fx.close();
    database.close();
  }
}
