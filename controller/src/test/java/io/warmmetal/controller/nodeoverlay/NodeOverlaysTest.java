package io.warmmetal.controller.nodeoverlay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClassReference;
import io.warmmetal.controller.karpenter.NodeOverlay;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.InstanceType.Offering;
import io.warmmetal.controller.scheduling.Resources;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Upstream's NodeOverlay controller suite ({@code pkg/controllers/nodeoverlay/suite_test.go}), one
 * test per {@code It}, named after it ({@code DescribeTable}s as parameterized tests over their
 * {@code Price} and {@code PriceAdjustment} entries): the controller over fabric8's mock API
 * server, instance types from a fake per NodePool, the store read as the planners read it.
 *
 * <p>WarmMetal's capacity type is a shape's, not an offering's: where upstream's one instance type
 * has offerings of several capacity types, here each capacity type is a type of its own with those
 * offerings (named after it); the overlays select the same offerings.
 */
@EnableKubernetesMockClient(crud = true)
class NodeOverlaysTest {
  KubernetesClient kube;
  private final InstanceTypeStore store = new InstanceTypeStore();
  private final AtomicInteger names = new AtomicInteger();

  /** What the fake cloud provider offers every NodePool; null: upstream fake's default types. */
  private List<InstanceType> instanceTypes;

  /** NodePools whose instance types cannot be read (upstream fake's ErrorsForNodePool). */
  private final Map<String, Exception> errorsForNodePool = new HashMap<>();

  private NodePool nodePool;
  private NodePool nodePoolTwo;
  private NodeOverlays controller;

  @BeforeEach
  void beforeEach() {
    nodePool = nodePool();
    nodePoolTwo = nodePool();
    instanceTypes = List.of(type("default-instance-type", "spot", offering("test-zone-1", 1.020)));
    applied(nodePool);
    controller =
        new NodeOverlays(
            kube,
            () -> kube.resources(NodeOverlay.class).list().getItems(),
            () -> kube.resources(NodePool.class).list().getItems(),
            this::getInstanceTypes,
            store);
  }

  // --- upstream's fake cloud provider, test.NodePool(), test.NodeOverlay(), expectations

  private NodePool nodePool() {
    NodePool pool = new NodePool();
    pool.getMetadata().setName("nodepool-" + names.incrementAndGet());
    pool.getSpec().template.spec.nodeClassRef = new NodeClassReference();
    pool.getSpec().template.spec.nodeClassRef.group = "warmmetal.io";
    pool.getSpec().template.spec.nodeClassRef.kind = "WarmMetalNodeClass";
    pool.getSpec().template.spec.nodeClassRef.name = "default";
    return pool;
  }

  private List<InstanceType> getInstanceTypes(NodePool pool) throws Exception {
    Exception error = errorsForNodePool.get(pool.getMetadata().getName());
    if (error != null) {
      throw error;
    }
    return instanceTypes == null ? defaultInstanceTypes() : instanceTypes;
  }

  /** Upstream fake's types: on-demand (WarmMetal's one capacity type) in three zones. */
  private static List<InstanceType> defaultInstanceTypes() {
    List<InstanceType> types = new ArrayList<>();
    for (String name :
        List.of(
            "default-instance-type",
            "small-instance-type",
            "gpu-vendor-instance-type",
            "gpu-vendor-b-instance-type",
            "arm-instance-type",
            "single-pod-instance-type")) {
      InstanceType type =
          type(
              name,
              "on-demand",
              offering("test-zone-1", 1),
              offering("test-zone-2", 1),
              offering("test-zone-3", 1));
      if (name.startsWith("arm")) {
        Map<String, String> labels = new HashMap<>(type.labels());
        labels.put(WellKnown.ARCH_LABEL, "arm64");
        type = new InstanceType(name, labels, type.allocatable(), 1, 0, type.offerings());
      }
      types.add(type);
    }
    return types;
  }

  static InstanceType type(String name, String capacityType, Offering... offerings) {
    return type(name, Map.of(WellKnown.CAPACITY_TYPE_LABEL, capacityType), offerings);
  }

  static InstanceType type(String name, Map<String, String> more, Offering... offerings) {
    Map<String, String> labels = new HashMap<>();
    labels.put(WellKnown.INSTANCE_TYPE_LABEL, name);
    labels.put(WellKnown.ARCH_LABEL, "amd64");
    labels.put(WellKnown.OS_LABEL, "linux");
    labels.putAll(more);
    return new InstanceType(
            name,
            labels,
            Resources.of(4000, 16L << 30).with("pods", 110),
            Double.MAX_VALUE,
            0,
            List.of(offerings))
        .withOfferings(List.of(offerings));
  }

  /** An offering of the fleet at its own price (not a NodeOverlay's). */
  static Offering offering(String zone, double price) {
    return new Offering(zone, null, 1, 0, price, false);
  }

  private void applied(Object... objects) {
    for (Object o : objects) {
      if (o instanceof NodePool pool) {
        kube.resources(NodePool.class).resource(pool).createOr(NonDeletingOperation::update);
      } else {
        kube.resources(NodeOverlay.class)
            .resource((NodeOverlay) o)
            .createOr(NonDeletingOperation::update);
      }
    }
  }

  private static Requirement req(String key, String op, String... values) {
    return new Requirement(key, op, List.of(values));
  }

  /** {@code test.NodeOverlay}: a name of its own unless given one. */
  private NodeOverlay overlay(String name, Integer weight, Requirement... requirements) {
    NodeOverlay overlay = new NodeOverlay();
    overlay.getMetadata().setName(name != null ? name : "overlay-" + names.incrementAndGet());
    overlay.getSpec().weight = weight;
    overlay.getSpec().requirements = new ArrayList<>(List.of(requirements));
    return overlay;
  }

  private static NodeOverlay with(NodeOverlay overlay, Consumer<NodeOverlay.Spec> change) {
    change.accept(overlay.getSpec());
    return overlay;
  }

  private static Consumer<NodeOverlay.Spec> price(String price) {
    return spec -> spec.price = price;
  }

  private static Consumer<NodeOverlay.Spec> priceAdjustment(String adjustment) {
    return spec -> spec.priceAdjustment = adjustment;
  }

  private static Consumer<NodeOverlay.Spec> capacity(String resource, String quantity) {
    return spec -> {
      spec.capacity = spec.capacity == null ? new HashMap<>() : spec.capacity;
      spec.capacity.put(resource, new Quantity(quantity));
    };
  }

  private void reconciled() throws Exception {
    assertThat(controller.reconcile()).isEqualTo(NodeOverlays.Outcome.EVALUATED);
  }

  private void reconciledFailed() {
    assertThatThrownBy(controller::reconcile).isInstanceOf(NodeOverlays.NodePoolsFailed.class);
  }

  private Condition validation(NodeOverlay overlay) {
    NodeOverlay read =
        kube.resources(NodeOverlay.class).withName(overlay.getMetadata().getName()).get();
    assertThat(read.getStatus()).as("status of " + overlay.getMetadata().getName()).isNotNull();
    return Conditions.get(read.getStatus().conditions, Conditions.VALIDATION_SUCCEEDED);
  }

  private void expectValid(NodeOverlay... overlays) {
    for (NodeOverlay overlay : overlays) {
      assertThat(validation(overlay).getStatus())
          .as(overlay.getMetadata().getName())
          .isEqualTo("True");
    }
  }

  private void expectInvalid(NodeOverlay overlay, String reason) {
    Condition condition = validation(overlay);
    assertThat(condition.getStatus()).isEqualTo("False");
    assertThat(condition.getReason()).isEqualTo(reason);
  }

  private void expectConflict(NodeOverlay overlay) {
    expectInvalid(overlay, "Conflict");
  }

  /** Upstream's {@code cloudProvider.GetInstanceTypes} then {@code store.ApplyAll}. */
  private List<InstanceType> applyAll(NodePool pool) throws Exception {
    return store.applyAll(pool.getMetadata().getName(), getInstanceTypes(pool));
  }

  private static InstanceType named(List<InstanceType> types, String name) {
    return types.stream().filter(t -> t.name().equals(name)).findFirst().orElseThrow();
  }

  private static double priceIn(InstanceType type, String zone) {
    return type.priceOf(
        type.offerings().stream().filter(o -> zone.equals(o.zone())).findFirst().orElseThrow());
  }

  private static Long extended(InstanceType type, String resource) {
    return type.allocatable().extended().get(resource);
  }

  static Stream<Arguments> prices(
      String price, double expected, String adjustment, double adjusted) {
    return Stream.of(
        Arguments.of("Price", price(price), expected),
        Arguments.of("PriceAdjustment", priceAdjustment(adjustment), adjusted));
  }

  static Stream<Arguments> pricePairs(String a, String b, String adjustA, String adjustB) {
    return Stream.of(
        Arguments.of("Price", price(a), price(b)),
        Arguments.of("PriceAdjustment", priceAdjustment(adjustA), priceAdjustment(adjustB)));
  }

  // --- Describe("Validation")

  @Nested
  class Validation {
    @Test
    void shouldReturnTheSameInstanceTypeWhenZeroOverlayAreApplied() throws Exception {
      applied(nodePool);
      reconciled();
      List<InstanceType> types = applyAll(nodePool);
      assertThat(types).hasSize(1);
      assertThat(types.get(0).offerings()).hasSize(1);
      assertThat(types.get(0).priceOf(types.get(0).offerings().get(0))).isEqualTo(1.020);
    }

    @Test
    void shouldPassWithASingleOverlay() throws Exception {
      NodeOverlay overlay =
          overlay(null, 10, req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type"));
      applied(overlay);
      reconciled();
      expectValid(overlay);
      Condition ready =
          Conditions.get(
              kube.resources(NodeOverlay.class)
                  .withName(overlay.getMetadata().getName())
                  .get()
                  .getStatus()
                  .conditions,
              Conditions.READY);
      assertThat(ready.getStatus()).isEqualTo("True");
    }

    @Nested
    class RuntimeValidation {
      @Test
      void shouldFailValidationForInvalidRequirementsValues() throws Exception {
        // the key's name part is too long for a label: only runtime validation sees it
        NodeOverlay overlay =
            overlay(null, 10, req("test.com.test/test-" + "x".repeat(250), "Exists"));
        applied(overlay);
        reconciled();
        expectInvalid(overlay, "RuntimeValidation");
      }

      @Test
      void shouldFailValidationForInvalidCapacityValues() throws Exception {
        // upstream makes its own resource well-known; ephemeral-storage is one already
        NodeOverlay overlay =
            with(
                overlay(
                    null, 10, req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type")),
                capacity("ephemeral-storage", "5"));
        applied(overlay);
        reconciled();
        expectInvalid(overlay, "RuntimeValidation");
        Condition ready =
            Conditions.get(
                kube.resources(NodeOverlay.class)
                    .withName(overlay.getMetadata().getName())
                    .get()
                    .getStatus()
                    .conditions,
                Conditions.READY);
        assertThat(ready.getStatus()).isEqualTo("False");
      }
    }

    @Nested
    class InstanceTypesRequirements {
      @Test
      void shouldFailWhenRequirementsOverlaysOverlap() throws Exception {
        instanceTypes = null;
        NodeOverlay a =
            with(overlay("overlay-a", 10, req(WellKnown.ARCH_LABEL, "In", "arm64")), price("1.03"));
        NodeOverlay b =
            with(
                overlay("overlay-b", 10, req(WellKnown.CAPACITY_TYPE_LABEL, "Exists")),
                price("23"));
        applied(a, b);
        reconciled();
        expectConflict(a);
        expectValid(b);
      }

      @Test
      void shouldSucceedWithRequirementsOverlaysDontOverlap() throws Exception {
        instanceTypes =
            List.of(
                type(
                    "arm-instance-type",
                    Map.of(
                        WellKnown.ARCH_LABEL, "arm64", WellKnown.CAPACITY_TYPE_LABEL, "on-demand"),
                    offering("test-zone-1", 1)),
                type(
                    "amd-instance-type",
                    Map.of(WellKnown.OS_LABEL, "ios", WellKnown.CAPACITY_TYPE_LABEL, "on-demand"),
                    offering("test-zone-1", 1)));
        NodeOverlay a =
            with(overlay("overlay-a", 10, req(WellKnown.ARCH_LABEL, "In", "arm64")), price("1.03"));
        NodeOverlay b =
            with(overlay("overlay-b", 10, req(WellKnown.OS_LABEL, "In", "ios")), price("23"));
        applied(a, b);
        reconciled();
        expectValid(a, b);
      }
    }

    @Nested
    class OfferingRequirements {
      @BeforeEach
      void offerings() {
        instanceTypes =
            List.of(
                type(
                    "spot-instance-type",
                    "spot",
                    offering("test-zone-1", 1.020),
                    offering("test-zone-3", 3.020)),
                type("on-demand-instance-type", "on-demand", offering("test-zone-2", 2.020)),
                type("reserved-instance-type", "reserved", offering("test-zone-4", 4.020)));
      }

      private void expect(boolean conflict, Requirement aSelects, Requirement bSelects)
          throws Exception {
        NodeOverlay a = with(overlay("overlay-a", 10, aSelects), price("1.03"));
        NodeOverlay b = with(overlay("overlay-b", 10, bSelects), price("23"));
        applied(a, b);
        reconciled();
        if (conflict) {
          expectConflict(a);
        } else {
          expectValid(a);
        }
        expectValid(b);
      }

      @Test
      void shouldFailWithRequirementsOverlaysOverlapOnZone() throws Exception {
        expect(
            true,
            req(WellKnown.ZONE_LABEL, "In", "test-zone-1", "test-zone-4"),
            req(WellKnown.CAPACITY_TYPE_LABEL, "Exists"));
      }

      @Test
      void shouldFailWithRequirementsOverlaysOverlapOnCapacityType() throws Exception {
        expect(
            true,
            req(WellKnown.CAPACITY_TYPE_LABEL, "Exists"),
            req(WellKnown.CAPACITY_TYPE_LABEL, "In", "spot"));
      }

      @Test
      void shouldSucceedWithRequirementsOverlaysDontOverlap() throws Exception {
        expect(
            false,
            req(WellKnown.ZONE_LABEL, "In", "test-zone-6", "test-zone-4"),
            req(WellKnown.CAPACITY_TYPE_LABEL, "In", "spot"));
      }

      @Test
      void shouldFailWithRequirementsOverlaysOverlap() throws Exception {
        expect(
            true,
            req(WellKnown.ZONE_LABEL, "In", "test-zone-1", "test-zone-4"),
            req(WellKnown.CAPACITY_TYPE_LABEL, "In", "spot"));
      }
    }

    @Nested
    class PricingUpdates {
      static Stream<Arguments> conflicting() {
        return pricePairs("1.03", "23", "+54", "-2");
      }

      static Stream<Arguments> same() {
        return pricePairs("100", "100", "+100", "+100");
      }

      static Stream<Arguments> exclusiveRequirements() {
        return pricePairs("54", "23", "+54", "-2");
      }

      static Stream<Arguments> exclusiveWeights() {
        return pricePairs("34", "2", "-4", "-2");
      }

      private void overlapping(
          Consumer<NodeOverlay.Spec> changeA, Consumer<NodeOverlay.Spec> changeB) throws Exception {
        NodeOverlay a =
            with(
                overlay(
                    "overlay-a",
                    10,
                    req(
                        WellKnown.INSTANCE_TYPE_LABEL,
                        "In",
                        "default-instance-type",
                        "small-instance-type")),
                changeA);
        NodeOverlay b =
            with(
                overlay(
                    "overlay-b",
                    10,
                    req(
                        WellKnown.INSTANCE_TYPE_LABEL,
                        "In",
                        "default-instance-type",
                        "gpu-vendor-instance-type")),
                changeB);
        applied(a, b);
        reconciled();
        expectConflict(a);
        expectValid(b);
      }

      @ParameterizedTest(name = "{0}")
      @MethodSource("conflicting")
      void shouldFailWithConflictingPricingUpdatesOverlaysWithOverlappingRequirements(
          String entry, Consumer<NodeOverlay.Spec> a, Consumer<NodeOverlay.Spec> b)
          throws Exception {
        overlapping(a, b);
      }

      @ParameterizedTest(name = "{0}")
      @MethodSource("same")
      void shouldFailWithPricingUpdatesAreTheSameOverlaysWithOverlappingRequirements(
          String entry, Consumer<NodeOverlay.Spec> a, Consumer<NodeOverlay.Spec> b)
          throws Exception {
        overlapping(a, b);
      }

      @ParameterizedTest(name = "{0}")
      @MethodSource("exclusiveRequirements")
      void shouldPassWithConflictingPricingUpdatesOverlaysWithMutuallyExclusiveRequirements(
          String entry, Consumer<NodeOverlay.Spec> changeA, Consumer<NodeOverlay.Spec> changeB)
          throws Exception {
        NodeOverlay a =
            with(
                overlay(
                    "overlay-a",
                    10,
                    req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type")),
                changeA);
        NodeOverlay b =
            with(
                overlay(
                    "overlay-b",
                    10,
                    req(WellKnown.INSTANCE_TYPE_LABEL, "NotIn", "default-instance-type")),
                changeB);
        applied(a, b);
        reconciled();
        expectValid(a, b);
      }

      @ParameterizedTest(name = "{0}")
      @MethodSource("exclusiveWeights")
      void shouldPassWithConflictingPricingUpdateOverlaysWithMutuallyExclusiveWeights(
          String entry, Consumer<NodeOverlay.Spec> changeA, Consumer<NodeOverlay.Spec> changeB)
          throws Exception {
        NodeOverlay a =
            with(
                overlay(
                    "overlay-a",
                    10,
                    req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type")),
                changeA);
        NodeOverlay b =
            with(
                overlay(
                    "overlay-b",
                    20,
                    req(
                        WellKnown.INSTANCE_TYPE_LABEL,
                        "In",
                        "default-instance-type",
                        "gpu-vendor-instance-type")),
                changeB);
        applied(a, b);
        reconciled();
        expectValid(a, b);
      }
    }

    @Nested
    class CapacityAdjustment {
      private void expect(boolean conflict, NodeOverlay a, NodeOverlay b) throws Exception {
        applied(a, b);
        reconciled();
        if (conflict) {
          expectConflict(a);
        } else {
          expectValid(a);
        }
        expectValid(b);
      }

      private NodeOverlay fuse(String name, int weight, String amount, Requirement selects) {
        return with(overlay(name, weight, selects), capacity("smarter-devices/fuse", amount));
      }

      private Requirement types(String op, String... names) {
        return req(WellKnown.INSTANCE_TYPE_LABEL, op, names);
      }

      @Test
      void shouldFailWithConflictingCapacityOverlaysWithOverlappingRequirements() throws Exception {
        expect(
            true,
            fuse("overlay-a", 10, "1", types("In", "default-instance-type", "small-instance-type")),
            fuse(
                "overlay-b",
                10,
                "54",
                types("In", "default-instance-type", "gpu-vendor-instance-type")));
      }

      @Test
      void shouldFailWithConflictingCapacityOverlaysWithMultipleOverlays() throws Exception {
        NodeOverlay a =
            with(
                overlay(
                    "conflicting-overlay-1",
                    10,
                    types("In", "default-instance-type", "small-instance-type")),
                capacity("hugepage-1Gi", "2Gi"));
        NodeOverlay b = fuse("good-overlay-1", 10, "1", types("In", "default-instance-type"));
        NodeOverlay c =
            with(
                overlay("conflicting-overlay-2", 10, types("In", "default-instance-type")),
                capacity("hugepage-1Gi", "3Gi"));
        applied(a, b, c);
        reconciled();
        expectConflict(a);
        expectValid(b, c);
      }

      @Test
      void shouldPassWithCapacityAdjustmentAreTheSameOverlaysWithOverlappingRequirements()
          throws Exception {
        // upstream's name says pass; it expects the conflict it finds
        expect(
            true,
            fuse(
                "overlay-a", 10, "54", types("In", "default-instance-type", "small-instance-type")),
            fuse(
                "overlay-b",
                10,
                "54",
                types("In", "default-instance-type", "gpu-vendor-instance-type")));
      }

      @Test
      void shouldPassWithConflictingCapacityOverlaysWithMutuallyExclusiveRequirements()
          throws Exception {
        expect(
            false,
            fuse("overlay-a", 10, "54", types("In", "default-instance-type")),
            fuse("overlay-b", 10, "5", types("NotIn", "default-instance-type")));
      }

      @Test
      void shouldPassWithConflictingCapacityOverlaysWithMutuallyExclusiveWeights()
          throws Exception {
        expect(
            false,
            fuse("overlay-a", 10, "55", types("In", "default-instance-type")),
            fuse(
                "overlay-b",
                20,
                "5",
                types("In", "default-instance-type", "gpu-vendor-instance-type")));
      }

      @Test
      void shouldPassWithNonConflictingCapacityOverlaysWithOverlappingRequirements()
          throws Exception {
        expect(
            false,
            fuse("overlay-a", 10, "55", types("In", "default-instance-type")),
            with(
                overlay(
                    "overlay-b",
                    20,
                    types("In", "default-instance-type", "gpu-vendor-instance-type")),
                capacity("smarter-devices/buz", "5")));
      }
    }
  }
}
