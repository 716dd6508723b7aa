package io.warmmetal.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.CSINodeBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.cloudprovider.CloudProviderException.InsufficientCapacity;
import io.warmmetal.controller.cloudprovider.CloudProviderException.Unavailable;
import io.warmmetal.controller.cloudprovider.FakeCloudProvider;
import io.warmmetal.controller.cloudprovider.RepairPolicy;
import io.warmmetal.controller.instances.WarmMetalCloudProvider;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.state.PodRequests;
import io.warmmetal.controller.testing.ControllerFixture;
import io.warmmetal.controller.testing.MockApiServer;
import io.warmmetal.controller.testing.PendingPods;
import io.warmmetal.protocol.testing.Await;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The rung between unit tests and e2e, as upstream's suites with their fake cloud provider: the
 * whole controller over a fixed state — fabric8's mock API server holding a NodePool, a node class
 * and pending pods, {@link FakeCloudProvider} for the fleet — stepped one pass at a time ({@link
 * Controller#passNow}). Each claim's lifecycle runs on its own workers; the tests wait for what it
 * does, counting, never sleeping.
 */
class ControllerPassTest {
  private static final String SHAPE = "x86-16c-64g";
  private MockApiServer api;
  private KubernetesClient kube;
  private final FakeCloudProvider cloud = new FakeCloudProvider();
  private final KarpenterMetrics metrics = new KarpenterMetrics();
  private Controller controller;

  /**
   * A test that starts the controller itself, with settings of its own, rather than closing the
   * usual one to start another: an informer's watch closed while the mock server is still sending
   * it events blocks that server's event loop (its WatchEventsListener waits for its sender there)
   * for up to a minute.
   */
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  private @interface OwnController {}

  @BeforeEach
  void start(TestInfo test) throws InterruptedException {
    api = MockApiServer.start();
    kube = api.kube;
    ControllerFixture.createDefaultPool(kube);
    cloud.offer(
        "default",
        new InstanceType(
            SHAPE,
            Map.of("node.kubernetes.io/instance-type", SHAPE),
            Resources.of(16_000, 64L << 30).with(PodRequests.PODS, 110).with("nodes", 1),
            0.5,
            3,
            List.of(new InstanceType.Offering("rack-1", "room-1", 3, 3))));
    if (!test.getTestMethod().orElseThrow().isAnnotationPresent(OwnController.class)) {
      controller = startedAndSynced(SETTINGS);
    }
  }

  private Controller startedAndSynced(Controller.Settings settings) throws InterruptedException {
    Controller started = started(settings);
    Await.until(
        "the informers synced", () -> !kube.resources(NodePool.class).list().getItems().isEmpty());
    return started;
  }

  private static final Controller.Settings SETTINGS = ControllerFixture.settings();

  private Controller started(Controller.Settings settings) {
    Controller started =
        new Controller(kube, settings, metrics, Clock.systemUTC(), (defs, onChange) -> cloud);
    started.start();
    return started;
  }

  @AfterEach
  void stop() {
    if (controller != null) {
      controller.close();
    }
    api.close();
  }

  private void pending(String name, String cpu) {
    pending(name, Map.of("cpu", new Quantity(cpu)));
  }

  private void pending(String name, Map<String, Quantity> requests) {
    kube.pods().inNamespace("default").resource(PendingPods.unschedulable(name, requests)).create();
  }

  private List<NodeClaim> claims() {
    return kube.resources(NodeClaim.class).list().getItems();
  }

  private static boolean launched(NodeClaim claim) {
    return claim.getStatus() != null
        && Conditions.isTrue(claim.getStatus().conditions, Conditions.LAUNCHED);
  }

  @Test
  void aPendingPodGetsOneNodeClaimWhichItsLifecycleLaunchesThroughTheCloudProvider()
      throws Exception {
    pending("web-1", "2");
    ControllerFixture.passUntil(controller, "a NodeClaim created", () -> claims().size() == 1);
    Await.until("launched", () -> launched(claims().get(0)));
    NodeClaim claim = claims().get(0);
    assertThat(claim.getMetadata().getLabels())
        .containsEntry("node.kubernetes.io/instance-type", SHAPE);
    assertThat(claim.getStatus().providerID).isEqualTo(cloud.instances().get(0).providerId());

    long before = controller.passesFinished();
    controller.passNow();
    controller.passNow();
    assertThat(controller.passesFinished()).isGreaterThanOrEqualTo(before + 2);
    assertThat(claims()).as("the pod is planned onto the claim on its way").hasSize(1);
    assertThat(cloud.createCalls).containsExactly(claim.getMetadata().getUid());
    // As upstream's dashboards read it: the launch timed, each controller's reconciles counted.
    String scraped = metrics.scrape();
    assertThat(scraped)
        .contains(
            "karpenter_cloudprovider_duration_seconds_count{controller=\"\",method=\"Create\","
                + "provider=\"warmmetal\",} 1.0")
        .contains("controller_runtime_reconcile_total{controller=\"nodeclaim.launch\"")
        .contains("controller_runtime_reconcile_total{controller=\"provisioning\"")
        .contains("workqueue_depth{controller=\"nodeclaim.lifecycle\"");
    // The pool's cost, its one node at its shape's price (worked out every 5 s).
    ControllerFixture.passUntil(
        controller,
        "the pool's cost",
        () ->
            metrics.scrape().contains("karpenter_nodepools_cost_total{nodepool=\"default\",} 0.5"));
  }

  @Test
  void anOutageKeepsTheClaimAndItsLaunchIsRetriedWithTheSameToken() throws Exception {
    cloud.failNextCreates(
        new Unavailable("503 ServiceUnavailable", Duration.ofMillis(200)),
        new Unavailable("connection refused", Duration.ofMillis(200)));
    pending("web-1", "2");
    ControllerFixture.passUntil(controller, "a NodeClaim created", () -> claims().size() == 1);
    Await.until("launched after two refusals", () -> launched(claims().get(0)));
    String uid = claims().get(0).getMetadata().getUid();
    assertThat(cloud.createCalls).containsExactly(uid, uid, uid);
    assertThat(cloud.instances()).hasSize(1);
    controller.passNow();
    assertThat(claims()).hasSize(1);
  }

  @Test
  void noCapacityGivesTheClaimUpAndTheNextPlanLeavesTheShapeOut() throws Exception {
    cloud.failNextCreates(new InsufficientCapacity("503 InsufficientCapacity"));
    pending("web-1", "2");
    ControllerFixture.passUntil(
        controller, "a NodeClaim created", () -> !cloud.createCalls.isEmpty());
    Await.until(
        "the claim given up",
        () -> claims().stream().allMatch(c -> c.getMetadata().getDeletionTimestamp() != null));
    controller.passNow(); // termination: nothing launched to terminate; the finalizer goes
    controller.passNow(); // the shape rests: nothing planned for now
    Await.until("the claim gone", () -> claims().isEmpty());
    assertThat(cloud.createCalls).hasSize(1);
    assertThat(cloud.instances()).isEmpty();
  }

  /**
   * Waits for the claim to be registered, then passes until its lifecycle has reconciled it three
   * more times (each pass looks at a claim not initialized yet).
   */
  private void registeredAndReconciledThriceMore(String what) throws Exception {
    Await.until(
        what,
        () ->
            claims().stream()
                .anyMatch(c -> Conditions.isTrue(c.getStatus().conditions, Conditions.REGISTERED)));
    long before = controller.lifecycleReconciles();
    while (controller.lifecycleReconciles() < before + 3) {
      controller.passNow();
    }
  }

  /** What a kubelet does for a launched claim: its Node, Ready, with this allocatable. */
  private void nodeRegisters(String name, NodeClaim claim, Map<String, Quantity> allocatable) {
    nodeRegisters(
        name,
        claim,
        allocatable,
        new NodeConditionBuilder().withType("Ready").withStatus("True").build());
  }

  /** A kubelet's Node for a launched claim, with its Ready condition as given. */
  private void nodeRegisters(
      String name, NodeClaim claim, Map<String, Quantity> allocatable, NodeCondition ready) {
    kube.nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .withProviderID(claim.getStatus().providerID)
                .endSpec()
                .withNewStatus()
                .withConditions(ready)
                .withAllocatable(allocatable)
                .endStatus()
                .build())
        .create();
  }

  @Test
  @OwnController
  void underBestEffortAPoolWhoseTypesCannotMeetItsMinValuesGetsARelaxedClaim() throws Exception {
    kube.resources(NodePool.class)
        .withName("default")
        .edit(
            p -> {
              Requirement flexible =
                  new Requirement("node.kubernetes.io/instance-type", "Exists", List.of());
              flexible.setMinValues(2); // the fleet offers one shape
              p.getSpec().template.spec.requirements.add(flexible);
              return p;
            });
    controller =
        startedAndSynced(
            new Controller.Settings(
                Duration.ofMillis(5),
                Duration.ofMillis(100),
                Resources.NONE,
                4,
                false,
                Duration.ofMinutes(2),
                Controller.Settings.SHAPES_REFRESH,
                true));
    pending("web-1", "2");
    ControllerFixture.passUntil(controller, "a NodeClaim created", () -> claims().size() == 1);
    NodeClaim claim = claims().get(0);
    assertThat(claim.getMetadata().getAnnotations())
        .containsEntry("karpenter.sh/nodeclaim-min-values-relaxed", "true");
    assertThat(claim.getSpec().requirements)
        .filteredOn(r -> "Exists".equals(r.getOperator()))
        .singleElement()
        .satisfies(r -> assertThat(r.getMinValues()).as("what the types give").isEqualTo(1));
    assertThat(metrics.scrape()).contains("min_values_relaxed=\"true\"");
  }

  @Test
  void aGpuClaimIsInitializedOnlyOnceItsNodeOffersTheGpu() throws Exception {
    String gpuShape = "x86-8c-64g-1gpu";
    cloud.offer(
        "default",
        new InstanceType(
            gpuShape,
            Map.of("node.kubernetes.io/instance-type", gpuShape),
            Resources.of(8_000, 64L << 30)
                .with(PodRequests.PODS, 110)
                .with("nodes", 1)
                .with("nvidia.com/gpu", 1),
            2.5,
            1,
            List.of(new InstanceType.Offering("rack-1", "room-1", 1, 1))));
    pending("trainer", Map.of("cpu", new Quantity("2"), "nvidia.com/gpu", new Quantity("1")));
    ControllerFixture.passUntil(controller, "a NodeClaim created", () -> claims().size() == 1);
    Await.until("launched", () -> launched(claims().get(0)));
    NodeClaim claim = claims().get(0);
    assertThat(claim.getSpec().resources.requests)
        .as("what its pods request, the GPU among it")
        .containsKeys("cpu", "memory", "pods", "nvidia.com/gpu");

    // Ready, but its device plugin has not registered the GPU yet.
    nodeRegisters("wm-gpu", claim, Map.of("cpu", new Quantity("8"), "pods", new Quantity("110")));
    registeredAndReconciledThriceMore("registered");
    assertThat(Conditions.isTrue(claims().get(0).getStatus().conditions, Conditions.INITIALIZED))
        .as("no GPU allocatable yet")
        .isFalse();

    kube.nodes()
        .withName("wm-gpu")
        .editStatus(
            n -> {
              n.getStatus().getAllocatable().put("nvidia.com/gpu", new Quantity("1"));
              return n;
            });
    Await.until(
        "initialized once the GPU is allocatable",
        () -> Conditions.isTrue(claims().get(0).getStatus().conditions, Conditions.INITIALIZED));
  }

  @Test
  void podsOnANodeNoNodePoolMadeCountForTopologySpread() throws Exception {
    cloud.offer(
        "default",
        new InstanceType(
            SHAPE,
            Map.of("node.kubernetes.io/instance-type", SHAPE),
            Resources.of(16_000, 64L << 30).with(PodRequests.PODS, 110),
            0.5,
            4,
            List.of(
                new InstanceType.Offering("rack-1", "room-1", 2, 2),
                new InstanceType.Offering("rack-2", "room-1", 2, 2))));
    kube.nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName("on-prem-1")
                .addToLabels(WellKnown.ZONE_LABEL, "rack-1")
                .endMetadata()
                .build())
        .create();
    Pod running = webPod("web-0", "1");
    running.getSpec().setNodeName("on-prem-1");
    running.setStatus(null);
    kube.pods().inNamespace("default").resource(running).create();
    kube.pods().inNamespace("default").resource(webPod("web-1", "1")).create();

    ControllerFixture.passUntil(controller, "a NodeClaim created", () -> claims().size() == 1);
    assertThat(claims().get(0).getSpec().requirements)
        .as("rack-1 has a web pod already, on a node not ours: the new one goes to rack-2")
        .anySatisfy(
            r -> {
              assertThat(r.getKey()).isEqualTo(WellKnown.ZONE_LABEL);
              assertThat(r.getValues()).containsExactly("rack-2");
            });
  }

  /** A pending pod of app web, spread over zones with a skew of at most one. */
  private static Pod webPod(String name, String cpu) {
    return new PodBuilder(PendingPods.unschedulable(name, Map.of("cpu", new Quantity(cpu))))
        .editMetadata()
        .addToLabels("app", "web")
        .endMetadata()
        .editSpec()
        .addNewTopologySpreadConstraint()
        .withTopologyKey(WellKnown.ZONE_LABEL)
        .withMaxSkew(1)
        .withWhenUnsatisfiable("DoNotSchedule")
        .withNewLabelSelector()
        .addToMatchLabels("app", "web")
        .endLabelSelector()
        .endTopologySpreadConstraint()
        .endSpec()
        .build();
  }

  @Test
  void aPodWhoseVolumeANodesCsiDriverCannotAttachGetsANewNode() throws Exception {
    kube.storage()
        .v1()
        .storageClasses()
        .resource(
            new StorageClassBuilder()
                .withNewMetadata()
                .withName("ceph")
                .endMetadata()
                .withProvisioner("rbd.csi.ceph.com")
                .build())
        .create();
    Pod first = mountingClaim("db-0", "data-0");
    kube.pods().inNamespace("default").resource(first).create();
    ControllerFixture.passUntil(controller, "a NodeClaim created", () -> claims().size() == 1);
    Await.until("launched", () -> launched(claims().get(0)));
    NodeClaim claim = claims().get(0);
    nodeRegisters("wm-1", claim, Map.of("cpu", new Quantity("16"), "pods", new Quantity("110")));
    Await.until(
        "registered",
        () -> {
          NodeClaim now =
              kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).get();
          return "wm-1".equals(now.getStatus().nodeName);
        });
    // The node's CSI driver attaches one volume; db-0's is attached there.
    kube.storage()
        .v1()
        .csiNodes()
        .resource(
            new CSINodeBuilder()
                .withNewMetadata()
                .withName("wm-1")
                .endMetadata()
                .withNewSpec()
                .addNewDriver()
                .withName("rbd.csi.ceph.com")
                .withNodeID("wm-1")
                .withNewAllocatable()
                .withCount(1)
                .endAllocatable()
                .endDriver()
                .endSpec()
                .build())
        .create();
    kube.pods()
        .inNamespace("default")
        .withName("db-0")
        .edit(
            p -> {
              p.getSpec().setNodeName("wm-1");
              p.setStatus(null);
              return p;
            });
    kube.pods().inNamespace("default").resource(mountingClaim("db-1", "data-1")).create();

    ControllerFixture.passUntil(
        controller, "a second NodeClaim, for db-1's volume", () -> claims().size() == 2);
  }

  /** A pending pod mounting an unbound claim of the {@code ceph} class (the claim created too). */
  private Pod mountingClaim(String pod, String claim) {
    kube.persistentVolumeClaims()
        .inNamespace("default")
        .resource(
            new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withName(claim)
                .withNamespace("default")
                .endMetadata()
                .withNewSpec()
                .withStorageClassName("ceph")
                .endSpec()
                .build())
        .create();
    return new PodBuilder(PendingPods.unschedulable(pod, Map.of("cpu", new Quantity("2"))))
        .editSpec()
        .addNewVolume()
        .withName("data")
        .withNewPersistentVolumeClaim()
        .withClaimName(claim)
        .endPersistentVolumeClaim()
        .endVolume()
        .endSpec()
        .build();
  }

  @Test
  void aNodeDeletedByHandTakesItsClaimAndInstanceWithIt() throws Exception {
    pending("web-1", "2");
    ControllerFixture.passUntil(controller, "a NodeClaim created", () -> claims().size() == 1);
    Await.until("launched", () -> launched(claims().get(0)));
    NodeClaim claim = claims().get(0);
    String instance = cloud.instances().get(0).id();
    nodeRegisters("wm-1", claim, Map.of("cpu", new Quantity("16"), "pods", new Quantity("110")));
    Await.until(
        "registered, the Node carrying the termination finalizer",
        () -> {
          Node node = kube.nodes().withName("wm-1").get();
          return node.getMetadata().getFinalizers() != null
              && node.getMetadata().getFinalizers().contains(WellKnown.TERMINATION_FINALIZER);
        });

    kube.nodes().withName("wm-1").delete(); // kubectl delete node
    assertThat(kube.nodes().withName("wm-1").get())
        .as("held by its finalizer until termination is done")
        .isNotNull();
    ControllerFixture.passUntil(
        controller,
        "the Node and its claim gone",
        () ->
            kube.nodes().withName("wm-1").get() == null
                && kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).get()
                    == null);
    assertThat(cloud.terminated).containsExactly(instance);
  }

  /**
   * A launched claim whose Node registered NotReady 31 minutes ago and never became Ready (its
   * kubelet up, its network plugin not, say) — past the toleration of WarmMetal's repair policies,
   * which the fake is given.
   */
  private NodeClaim aNodeNotReadyForOverHalfAnHour() throws Exception {
    cloud.repairPolicies(WarmMetalCloudProvider.REPAIR_POLICIES.toArray(RepairPolicy[]::new));
    pending("web-1", "2");
    ControllerFixture.passUntil(controller, "a NodeClaim created", () -> claims().size() == 1);
    Await.until("launched", () -> launched(claims().get(0)));
    NodeClaim claim = claims().get(0);
    nodeRegisters(
        "wm-1",
        claim,
        Map.of("cpu", new Quantity("16"), "pods", new Quantity("110")),
        new NodeConditionBuilder()
            .withType("Ready")
            .withStatus("False")
            .withLastTransitionTime(Instant.now().minus(Duration.ofMinutes(31)).toString())
            .build());
    return claim;
  }

  @Test
  @OwnController
  void withNodeRepairOnAnUnhealthyNodesClaimIsDeletedAndReplaced() throws Exception {
    controller = startedAndSynced(SETTINGS.withFeatureGates(FeatureGates.parse("NodeRepair=true")));
    NodeClaim unhealthy = aNodeNotReadyForOverHalfAnHour();
    String instance = cloud.instances().get(0).id();
    String name = unhealthy.getMetadata().getName();
    ControllerFixture.passUntil(
        controller,
        "the claim gone, its Node too, and another launched for its pod",
        () ->
            kube.resources(NodeClaim.class).withName(name).get() == null
                && kube.nodes().withName("wm-1").get() == null
                && claims().size() == 1
                && launched(claims().get(0)));
    assertThat(cloud.terminated).containsExactly(instance);
    assertThat(metrics.scrape())
        .containsPattern(
            "karpenter_nodeclaims_unhealthy_disrupted_total\\{[^}]*condition=\"ready\"[^}]*} 1.0")
        .containsPattern(
            "karpenter_nodeclaims_disrupted_total\\{[^}]*reason=\"unhealthy\"[^}]*} 1.0");
  }

  @Test
  void withNodeRepairOffAnUnhealthyNodeIsLeftAlone() throws Exception {
    NodeClaim unhealthy = aNodeNotReadyForOverHalfAnHour();
    // Node repair, when on, looks before registration: a claim registered was looked at.
    registeredAndReconciledThriceMore("registered: its lifecycle has seen the Node");
    assertThat(claims())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getMetadata().getName()).isEqualTo(unhealthy.getMetadata().getName());
              assertThat(c.getMetadata().getDeletionTimestamp()).isNull();
            });
    assertThat(cloud.terminated).isEmpty();
    assertThat(metrics.scrape()).doesNotContain("karpenter_nodeclaims_unhealthy_disrupted_total");
  }
}
