package io.warmmetal.e2e.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.controller.Controller;
import io.warmmetal.controller.buffers.CapacityBuffer;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.e2e.Installation;
import io.warmmetal.protocol.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Active capacity buffers through the whole controller, fast: the real controller and the real
 * WarmMetal API (on PostgreSQL, warm machines of shape {@code x86-16c-64g}), with fabric8's mock
 * API server for the cluster — the test does what kubelets and kube-scheduler would (registers a
 * launched NodeClaim's Node, Ready; binds pods). A buffer's virtual pods take part in provisioning
 * like pending pods: they use room there is, else NodeClaims are launched for them, and when real
 * pods take the room, more; consolidation leaves the room they hold until the buffer goes. (The
 * same on a real control plane: {@code CapacityBufferTest}, cluster tier.)
 */
@ExtendWith(VertxExtension.class)
@EnableKubernetesMockClient(crud = true)
class ActiveCapacityTest {
  KubernetesClient kube;
  private ApiFixture fx;
  private Controller controller;

  @AfterEach
  void stop() {
    if (controller != null) {
      controller.close();
    }
    kube.close(); // every watch's connection gone: the mock server then closes at once
    if (fx != null) {
      fx.close();
    }
  }

  /**
   * {@code machines} warm machines, WarmMetal installed (the NodePool adjusted), the controller up.
   */
  private void start(Vertx vertx, int machines, Consumer<NodePool> pool) throws Exception {
    fx = ApiFixture.start(vertx);
    fx.registerMachines(machines, ApiFixture.facts(16, 64), true);
    Installation.installInto(
        kube,
        "http://127.0.0.1:" + fx.api.port(),
        fx.token("client"),
        "192.0.2.1:6443", // no node joins for real here
        "sha256:" + "0".repeat(64),
        pool);
    // As deploy/controller.yaml runs it; every node keeps 100m and 256 MiB.
    controller =
        new Controller(
            kube,
            new Controller.Settings(
                Duration.ofMillis(5),
                Duration.ofMillis(100),
                Resources.of(100, 256L << 20),
                4,
                true,
                Installation.STANDBY_UNHEALTHY_AFTER),
            new KarpenterMetrics());
    controller.start();
  }

  private static void consolidation(NodePool pool, String policy) {
    pool.getSpec().disruption = new NodePool.Disruption();
    pool.getSpec().disruption.consolidationPolicy = policy;
    pool.getSpec().disruption.consolidateAfter = "1s";
  }

  /** Waits for {@code n} whole controller passes after now. */
  private void awaitPasses(int n) throws InterruptedException {
    long target = controller.passesFinished() + n + 1;
    Await.until(
        n + " controller passes",
        () -> {
          controller.trigger();
          return controller.passesFinished() >= target;
        });
  }

  private List<NodeClaim> claims() {
    return kube.resources(NodeClaim.class).list().getItems();
  }

  /**
   * What kubelets do for launched NodeClaims: each gets its Node (named as the claim, 16 CPU and 64
   * GiB, Ready; allocatable what is left after the kubelet's reservation, as much as the
   * controller's reserve here), which the controller then registers and initializes. Returns once
   * all are initialized.
   */
  private void nodesJoin() throws InterruptedException {
    for (NodeClaim claim : claims()) {
      String name = claim.getMetadata().getName();
      if (kube.nodes().withName(name).get() != null) {
        continue;
      }
      Map<String, Quantity> capacity =
          Map.of(
              "cpu",
              new Quantity("16"),
              "memory",
              new Quantity("64Gi"),
              "pods",
              new Quantity("110"));
      kube.nodes()
          .resource(
              new NodeBuilder()
                  .withNewMetadata()
                  .withName(name)
                  .withLabels(Map.of("kubernetes.io/hostname", name))
                  .endMetadata()
                  .withNewSpec()
                  .withProviderID(claim.getStatus().providerID)
                  .endSpec()
                  .withNewStatus()
                  .withCapacity(capacity)
                  .withAllocatable(
                      Map.of(
                          "cpu",
                          new Quantity("15900m"),
                          "memory",
                          new Quantity("65280Mi"),
                          "pods",
                          new Quantity("110")))
                  .addNewCondition()
                  .withType("Ready")
                  .withStatus("True")
                  .endCondition()
                  .endStatus()
                  .build())
          .create();
    }
    controller.trigger();
    Await.until(
        "every NodeClaim initialized",
        () ->
            claims().stream()
                .allMatch(
                    c ->
                        c.getStatus() != null
                            && Conditions.isTrue(
                                c.getStatus().conditions, Conditions.INITIALIZED)));
  }

  /** Waits until {@code n} NodeClaims are launched (their instances taken from the warm pool). */
  private void awaitLaunched(int n) throws InterruptedException {
    controller.trigger();
    Await.until(
        n + " NodeClaim(s) launched",
        () ->
            claims().size() == n
                && claims().stream()
                    .allMatch(
                        c ->
                            c.getStatus() != null
                                && Conditions.isTrue(
                                    c.getStatus().conditions, Conditions.LAUNCHED)));
  }

  /** A pod of {@code cpu} bound to {@code node} (as kube-scheduler would), Running. */
  private void bind(String name, String cpu, String node) {
    Pod pod = Fleet.pod(name, cpu);
    pod.getSpec().setNodeName(node);
    pod = kube.pods().inNamespace("default").resource(pod).create();
    pod.setStatus(
        new PodStatusBuilder()
            .withPhase("Running")
            .withConditions(new PodConditionBuilder().withType("Ready").withStatus("True").build())
            .build());
    kube.pods().inNamespace("default").resource(pod).updateStatus();
  }

  /** A pod kube-scheduler found no room for: Unschedulable. */
  private void pending(String name, String cpu) {
    Pod pod = kube.pods().inNamespace("default").resource(Fleet.pod(name, cpu)).create();
    pod.setStatus(
        Serialization.unmarshal(
            "phase: Pending\nconditions: [{type: PodScheduled, status: 'False', reason:"
                + " Unschedulable}]",
            PodStatus.class));
    kube.pods().inNamespace("default").resource(pod).updateStatus();
  }

  /** A PodTemplate {@code chunk} of {@code cpu} and 1 GiB, and a buffer of it, {@code replicas}. */
  private void buffer(String name, String cpu, int replicas, String strategy) {
    if (kube.v1().podTemplates().inNamespace("default").withName(name).get() == null) {
      kube.resource(
              Serialization.<HasMetadata>unmarshal(
                  """
                  apiVersion: v1
                  kind: PodTemplate
                  metadata: {name: %s, namespace: default}
                  template:
                    spec:
                      containers:
                        - {name: app, image: app, resources: {requests: {cpu: "%s", memory: 1Gi}}}
                  """
                      .formatted(name, cpu)))
          .create();
    }
    CapacityBuffer buffer = new CapacityBuffer();
    buffer.getMetadata().setName(name);
    buffer.getMetadata().setNamespace("default");
    buffer.getSpec().provisioningStrategy = strategy;
    buffer.getSpec().podTemplateRef = new CapacityBuffer.LocalObjectRef(name);
    buffer.getSpec().replicas = replicas;
    kube.resources(CapacityBuffer.class).resource(buffer).create();
    controller.trigger();
  }

  private CapacityBuffer.Status status(String name) {
    CapacityBuffer b =
        kube.resources(CapacityBuffer.class).inNamespace("default").withName(name).get();
    return b == null ? null : b.getStatus();
  }

  private boolean provisioning(String buffer, String reason) {
    CapacityBuffer.Status status = status(buffer);
    var c = status == null ? null : Conditions.get(status.conditions, CapacityBuffer.PROVISIONING);
    return c != null && reason.equals(c.getReason());
  }

  private long warm() {
    return fx.count("SELECT count(*) FROM machines WHERE state = 'warm'");
  }

  @Test
  void aBufferThatFitsTheNodesThereLaunchesNothingAndOneThatDoesNotLaunchesItsRoom(Vertx vertx)
      throws Exception {
    // Consolidation out of the way: the test moves its pod onto the node as a pod deleted and
    // created again, and under the default consolidateAfter (0s) the node is empty in between.
    start(
        vertx,
        3,
        pool -> {
          pool.getSpec().disruption = new NodePool.Disruption();
          pool.getSpec().disruption.consolidateAfter = "1h";
        });
    // A node there, for a pod that needed one: 16 CPU, 4 taken, 11.9 left (100m kept).
    pending("web", "4");
    awaitLaunched(1);
    nodesJoin();
    String node = claims().get(0).getMetadata().getName();
    kube.pods().inNamespace("default").withName("web").delete();
    bind("web", "4", node);

    // 2 × 4 CPU fit in the room there: nothing launched, provisioned at once.
    buffer("small", "4", 2, null);
    Await.until("small fits the node there", () -> provisioning("small", "FitsExistingCapacity"));
    awaitPasses(3);
    assertThat(claims()).hasSize(1);

    // 2 × 7 CPU more do not fit beside them: a node is launched, from the warm pool; both buffers
    // provisioned once it is there.
    buffer("large", "7", 2, "buffer.x-k8s.io/active-capacity");
    Await.until("large needs new capacity", () -> provisioning("large", "RequiresNewCapacity"));
    awaitLaunched(2);
    assertThat(warm()).isEqualTo(1);
    nodesJoin();
    Await.until(
        "both provisioned",
        () ->
            provisioning("large", "FitsExistingCapacity")
                && provisioning("small", "FitsExistingCapacity"));
    awaitPasses(3);
    assertThat(claims()).hasSize(2);
    assertThat(kube.pods().inAnyNamespace().list().getItems())
        .extracting(p -> p.getMetadata().getName())
        .containsExactly("web"); // virtual pods are never created
    assertThat(
            kube.v1().events().inAnyNamespace().list().getItems().stream()
                .filter(e -> Recorder.COMPONENT.equals(e.getSource().getComponent()))
                .map(e -> e.getInvolvedObject().getName()))
        .noneMatch(name -> name.startsWith("capacity-buffer-"));
  }

  @Test
  void aRealPodTakingTheBuffersRoomMakesItLaunchMoreFromTheWarmPool(Vertx vertx) throws Exception {
    start(vertx, 3, pool -> {});
    buffer("spare", "4", 1, null);
    awaitLaunched(1);
    nodesJoin();
    String node = claims().get(0).getMetadata().getName();
    Await.until("provisioned", () -> provisioning("spare", "FitsExistingCapacity"));
    assertThat(warm()).isEqualTo(2);

    // A real pod lands in the room (kube-scheduler binds it there: no launch for it), taking so
    // much the buffer's chunk no longer fits beside it: the buffer is replenished from the pool.
    bind("burst", "12", node);
    awaitLaunched(2);
    assertThat(warm()).isEqualTo(1);
    nodesJoin();
    Await.until("provisioned again", () -> provisioning("spare", "FitsExistingCapacity"));
    awaitPasses(3);
    assertThat(claims()).hasSize(2);
  }

  @Test
  void consolidationKeepsTheBuffersRoomUntilTheBufferGoes(Vertx vertx) throws Exception {
    start(vertx, 3, pool -> consolidation(pool, "WhenEmptyOrUnderutilized"));
    buffer("spare", "4", 1, null);
    awaitLaunched(1);
    nodesJoin();
    NodeClaim held = claims().get(0);
    String node = held.getMetadata().getName();

    // Empty of real pods past consolidateAfter, yet not empty: it holds the buffer's room (said as
    // upstream says it), and no cheaper node would hold it.
    Await.until(
        "the node kept for its buffer pods",
        () ->
            kube.v1().events().inAnyNamespace().list().getItems().stream()
                .anyMatch(
                    e ->
                        "Unconsolidatable".equals(e.getReason())
                            && node.equals(e.getInvolvedObject().getName())
                            && ("Node \"" + node + "\" has buffer pods").equals(e.getMessage())));
    awaitPasses(5);
    assertThat(claims()).extracting(c -> c.getMetadata().getName()).containsExactly(node);

    // Room on two nodes where the buffer needs it on one: the other goes.
    bind("burst", "12", node);
    awaitLaunched(2);
    nodesJoin();
    kube.pods().inNamespace("default").withName("burst").delete();
    Await.until("one node left for the buffer", () -> claims().size() == 1, 60_000);
    awaitPasses(5);
    assertThat(claims()).hasSize(1);
    assertThat(provisioning("spare", "FitsExistingCapacity")).isTrue();

    // The buffer gone, its room goes too.
    kube.resources(CapacityBuffer.class).inNamespace("default").withName("spare").delete();
    Await.until("the empty node consolidated", () -> claims().isEmpty(), 60_000);
  }

  @Test
  void aBufferOfAnotherStrategyLaunchesNothing(Vertx vertx) throws Exception {
    start(vertx, 2, pool -> {});
    buffer("gke", "4", 2, "buffer.gke.io/standby-capacity");
    awaitPasses(5);
    assertThat(claims()).isEmpty();
    assertThat(status("gke") == null || status("gke").conditions.isEmpty()).isTrue();
    assertThat(warm()).isEqualTo(2);
  }
}
