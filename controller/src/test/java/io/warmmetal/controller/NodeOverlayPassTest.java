package io.warmmetal.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.cloudprovider.FakeCloudProvider;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeOverlay;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.state.PodRequests;
import io.warmmetal.controller.testing.ControllerFixture;
import io.warmmetal.controller.testing.MockApiServer;
import io.warmmetal.controller.testing.PendingPods;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * NodeOverlays on a running controller (as {@link ControllerPassTest}: fabric8's mock API server,
 * {@link FakeCloudProvider}, one pass at a time): with the {@code NodeOverlay} gate, an overlay's
 * price makes another instance type the one a pending pod's node is of, and its capacity (an
 * extended resource) makes a pod that asks for it provisionable; without the gate, overlays are
 * ignored and left alone.
 */
class NodeOverlayPassTest {
  private static final String CHEAP = "x86-8c-32g";
  private static final String DEAR = "x86-16c-64g";
  private static final String FUSE = "smarter-devices/fuse";

  private MockApiServer api;
  private KubernetesClient kube;
  private final FakeCloudProvider cloud = new FakeCloudProvider();
  private Controller controller;

  @BeforeEach
  void definitions() {
    api = MockApiServer.start();
    kube = api.kube;
    ControllerFixture.createDefaultPool(kube);
    cloud.offer("default", type(CHEAP, 8, 0.5), type(DEAR, 16, 0.8));
  }

  private static InstanceType type(String name, int cpus, double price) {
    return new InstanceType(
        name,
        Map.of(WellKnown.INSTANCE_TYPE_LABEL, name, WellKnown.CAPACITY_TYPE_LABEL, "on-demand"),
        Resources.of(cpus * 1000L, (long) cpus << 32).with(PodRequests.PODS, 110).with("nodes", 1),
        price,
        3,
        List.of(new InstanceType.Offering("rack-1", "room-1", 3, 3)));
  }

  private void start(String featureGates) {
    controller =
        new Controller(
            kube,
            ControllerFixture.settings().withFeatureGates(FeatureGates.parse(featureGates)),
            new KarpenterMetrics(),
            Clock.systemUTC(),
            (defs, onChange) -> cloud);
    controller.start();
  }

  @AfterEach
  void stop() {
    if (controller != null) {
      controller.close();
    }
    api.close();
  }

  private static NodeOverlay overlay(String name, String type) {
    NodeOverlay overlay = new NodeOverlay();
    overlay.getMetadata().setName(name);
    overlay.getSpec().requirements =
        List.of(new Requirement(WellKnown.INSTANCE_TYPE_LABEL, "In", List.of(type)));
    return overlay;
  }

  /** The cheaper type made the dearer: 0.5 + 100 % is 1.0, more than the 0.8 of the larger. */
  private static NodeOverlay cheapIsDear() {
    NodeOverlay overlay = overlay("cheap-is-dear", CHEAP);
    overlay.getSpec().priceAdjustment = "+100%";
    return overlay;
  }

  /** The larger type given a device no type has. */
  private static NodeOverlay fuseOnDear() {
    NodeOverlay overlay = overlay("fuse", DEAR);
    overlay.getSpec().capacity = Map.of(FUSE, new Quantity("1"));
    return overlay;
  }

  private void create(NodeOverlay overlay) {
    kube.resources(NodeOverlay.class).resource(overlay).create();
  }

  private Condition validation(String overlay) {
    NodeOverlay read = kube.resources(NodeOverlay.class).withName(overlay).get();
    return read.getStatus() == null
        ? null
        : Conditions.get(read.getStatus().conditions, Conditions.VALIDATION_SUCCEEDED);
  }

  private boolean evaluated(String overlay) {
    Condition condition = validation(overlay);
    return condition != null && "True".equals(condition.getStatus());
  }

  private void pending(String name, Map<String, Quantity> requests) {
    kube.pods().inNamespace("default").resource(PendingPods.unschedulable(name, requests)).create();
  }

  private List<NodeClaim> claims() {
    return kube.resources(NodeClaim.class).list().getItems();
  }

  /** The instance types the claim accepts, in order: the first is the one it is planned as. */
  private static List<String> acceptable(NodeClaim claim) {
    return claim.getSpec().requirements.stream()
        .filter(r -> WellKnown.INSTANCE_TYPE_LABEL.equals(r.getKey()))
        .findFirst()
        .orElseThrow()
        .getValues();
  }

  /** Two more passes run to their end: what would have been planned has been. */
  private void twoMorePasses() throws Exception {
    long before = controller.passesFinished();
    controller.passNow();
    controller.passNow();
    assertThat(controller.passesFinished()).isGreaterThanOrEqualTo(before + 2);
  }

  @Test
  void anOverlaysPriceMakesAnotherInstanceTypeTheOneChosen() throws Exception {
    start("NodeOverlay=true");
    create(cheapIsDear());
    ControllerFixture.passUntil(
        controller, "the overlay evaluated", () -> evaluated("cheap-is-dear"));
    assertThat(
            Conditions.isTrue(
                kube.resources(NodeOverlay.class)
                    .withName("cheap-is-dear")
                    .get()
                    .getStatus()
                    .conditions,
                Conditions.READY))
        .isTrue();

    pending("web-1", Map.of("cpu", new Quantity("2")));
    ControllerFixture.passUntil(controller, "a NodeClaim created", () -> claims().size() == 1);
    NodeClaim claim = claims().get(0);
    assertThat(acceptable(claim)).containsExactly(DEAR, CHEAP);
    assertThat(claim.getMetadata().getAnnotations())
        .containsEntry(WellKnown.PRICE_OVERLAY_APPLIED_ANNOTATION, "true")
        .doesNotContainKey(WellKnown.CAPACITY_OVERLAY_APPLIED_ANNOTATION);
  }

  @Test
  void anOverlaysCapacityMakesAPodThatAsksForItProvisionable() throws Exception {
    start("NodeOverlay=true");
    pending("fuse-user", Map.of("cpu", new Quantity("1"), FUSE, new Quantity("1")));
    twoMorePasses();
    assertThat(claims()).as("no instance type has " + FUSE + " yet").isEmpty();

    create(fuseOnDear());
    ControllerFixture.passUntil(controller, "a NodeClaim created", () -> claims().size() == 1);
    NodeClaim claim = claims().get(0);
    assertThat(acceptable(claim)).containsExactly(DEAR);
    assertThat(claim.getSpec().resources.requests).containsKey(FUSE);
    assertThat(claim.getMetadata().getAnnotations())
        .containsEntry(WellKnown.CAPACITY_OVERLAY_APPLIED_ANNOTATION, "true");
    assertThat(evaluated("fuse")).isTrue();
  }

  @Test
  void withoutTheFeatureGateOverlaysAreIgnored() throws Exception {
    start("");
    create(cheapIsDear());
    create(fuseOnDear());
    pending("web-1", Map.of("cpu", new Quantity("2")));
    pending("fuse-user", Map.of("cpu", new Quantity("1"), FUSE, new Quantity("1")));
    ControllerFixture.passUntil(controller, "a NodeClaim created", () -> !claims().isEmpty());
    twoMorePasses();
    List<NodeClaim> claims = claims();
    assertThat(claims).as("the fuse user has no place: overlays add nothing").hasSize(1);
    assertThat(acceptable(claims.get(0)).get(0))
        .as("the cheapest as the fleet prices it")
        .isEqualTo(CHEAP);
    assertThat(claims.get(0).getMetadata().getAnnotations())
        .doesNotContainKeys(
            WellKnown.PRICE_OVERLAY_APPLIED_ANNOTATION,
            WellKnown.CAPACITY_OVERLAY_APPLIED_ANNOTATION);
    assertThat(validation("cheap-is-dear")).as("no status: no controller reads overlays").isNull();
  }
}
