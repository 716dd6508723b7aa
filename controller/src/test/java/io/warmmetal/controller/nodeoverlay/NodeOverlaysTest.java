package io.warmmetal.controller.nodeoverlay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
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

  // --- Describe("Instance Type Controller")

  @Nested
  class InstanceTypeController {
    @Nested
    class PriceUpdates {
      @Nested
      class Requirements {
        static Stream<Arguments> appliedPrices() {
          return prices("13234.223", 13234.223, "+1000", 1001.020);
        }

        static Stream<Arguments> forBoth() {
          return Stream.of(
              Arguments.of("Price", price("13234.223"), price("232.11"), 13234.223, 232.11),
              Arguments.of(
                  "PriceAdjustment",
                  priceAdjustment("+1000"),
                  priceAdjustment("+2500"),
                  1001.020,
                  2501.020));
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("appliedPrices")
        void shouldPassWithConflictingPricingUpdateOverlaysWithMutuallyExclusiveWeights(
            String entry, Consumer<NodeOverlay.Spec> change, double expected) throws Exception {
          NodeOverlay overlay =
              with(
                  overlay(
                      null,
                      10,
                      req(WellKnown.NODEPOOL_LABEL, "In", nodePool.getMetadata().getName())),
                  change);
          applied(nodePool, nodePoolTwo, overlay);
          reconciled();
          List<InstanceType> types = applyAll(nodePool);
          assertThat(types).hasSize(1);
          assertThat(priceIn(types.get(0), "test-zone-1")).isEqualTo(expected);
          types = applyAll(nodePoolTwo);
          assertThat(types).hasSize(1);
          assertThat(priceIn(types.get(0), "test-zone-1")).isEqualTo(1.020);
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("forBoth")
        void shouldPassWithConflictingPricingUpdateOverlaysForAllNodepools(
            String entry,
            Consumer<NodeOverlay.Spec> changeA,
            Consumer<NodeOverlay.Spec> changeB,
            double expectedOne,
            double expectedTwo)
            throws Exception {
          NodeOverlay a =
              with(
                  overlay(
                      null,
                      10,
                      req(WellKnown.NODEPOOL_LABEL, "In", nodePool.getMetadata().getName())),
                  changeA);
          NodeOverlay b =
              with(
                  overlay(
                      null,
                      10,
                      req(WellKnown.NODEPOOL_LABEL, "In", nodePoolTwo.getMetadata().getName())),
                  changeB);
          applied(nodePool, nodePoolTwo, a, b);
          reconciled();
          assertThat(priceIn(applyAll(nodePool).get(0), "test-zone-1")).isEqualTo(expectedOne);
          assertThat(priceIn(applyAll(nodePoolTwo).get(0), "test-zone-1")).isEqualTo(expectedTwo);
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("appliedPrices")
        void shouldOnlyApplyPricingUpdatesForNodeclaimSpecLabelsThatDefinedInTheOverlayRequirements(
            String entry, Consumer<NodeOverlay.Spec> change, double expected) throws Exception {
          nodePoolTwo.getSpec().template.metadata.labels = Map.of("test-label", "test-value");
          NodeOverlay overlay =
              with(overlay(null, 10, req("test-label", "In", "test-value")), change);
          applied(nodePool, nodePoolTwo, overlay);
          reconciled();
          assertThat(priceIn(applyAll(nodePool).get(0), "test-zone-1")).isEqualTo(1.020);
          assertThat(priceIn(applyAll(nodePoolTwo).get(0), "test-zone-1")).isEqualTo(expected);
        }
      }

      static Stream<Arguments> unchangedPrices() {
        return prices("13234.223", 1.02, "+1000", 1.02);
      }

      static Stream<Arguments> appliedPrices() {
        return prices("13234.223", 13234.223, "+1000", 1001.020);
      }

      @ParameterizedTest(name = "{0}")
      @MethodSource("unchangedPrices")
      void shouldNotApplyPricingUpdatesForInvalidOverlays(
          String entry, Consumer<NodeOverlay.Spec> change, double expected) throws Exception {
        NodeOverlay overlay =
            with(overlay(null, 10, req("test.com.test/test-" + "x".repeat(250), "Exists")), change);
        applied(nodePool, overlay);
        reconciled();
        assertThat(validation(overlay).getStatus()).isEqualTo("False");
        assertThat(priceIn(applyAll(nodePool).get(0), "test-zone-1")).isEqualTo(expected);
      }

      @ParameterizedTest(name = "{0}")
      @MethodSource("unchangedPrices")
      void shouldNotApplyAdjustmentsForOverlaysThatDoNotOverlapWithInstanceTypesRequirements(
          String entry, Consumer<NodeOverlay.Spec> change, double expected) throws Exception {
        NodeOverlay overlay =
            with(
                overlay(
                    null,
                    10,
                    req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type-not-found")),
                change);
        applied(nodePool, overlay);
        reconciled();
        List<InstanceType> types = applyAll(nodePool);
        assertThat(types).hasSize(1);
        assertThat(priceIn(types.get(0), "test-zone-1")).isEqualTo(expected);
        assertThat(types.get(0).priceOverlaid()).isFalse();
      }

      @ParameterizedTest(name = "{0}")
      @MethodSource("appliedPrices")
      void shouldApplyPricingUpdatesForInstancesTypes(
          String entry, Consumer<NodeOverlay.Spec> change, double expected) throws Exception {
        NodeOverlay overlay =
            with(
                overlay(
                    null, 10, req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type")),
                change);
        applied(nodePool, overlay);
        reconciled();
        List<InstanceType> types = applyAll(nodePool);
        assertThat(types).hasSize(1);
        assertThat(types.get(0).offerings()).hasSize(1);
        assertThat(priceIn(types.get(0), "test-zone-1")).isEqualTo(expected);
        assertThat(types.get(0).price())
            .as("the type's price is its offering's")
            .isEqualTo(expected);
        assertThat(types.get(0).priceOverlaid()).isTrue();
      }

      static Stream<Arguments> onDemand() {
        return prices("12321.32", 12321.32, "+1000", 1005.020);
      }

      @ParameterizedTest(name = "{0}")
      @MethodSource("onDemand")
      void shouldApplyPricingUpdatesForInstancesTypesForCapacityType(
          String entry, Consumer<NodeOverlay.Spec> change, double expected) throws Exception {
        instanceTypes =
            List.of(
                type("default-instance-type-spot", "spot", offering("test-zone-1", 1.020)),
                type(
                    "default-instance-type-on-demand",
                    "on-demand",
                    offering("test-zone-1", 5.020)));
        NodeOverlay overlay =
            with(overlay(null, 10, req(WellKnown.CAPACITY_TYPE_LABEL, "In", "on-demand")), change);
        applied(nodePool, overlay);
        reconciled();
        List<InstanceType> types = applyAll(nodePool);
        assertThat(types).hasSize(2);
        assertThat(priceIn(named(types, "default-instance-type-on-demand"), "test-zone-1"))
            .isCloseTo(expected, within(1e-9));
        assertThat(priceIn(named(types, "default-instance-type-spot"), "test-zone-1"))
            .isCloseTo(1.020, within(1e-9));
      }

      static Stream<Arguments> zoneOne() {
        return prices("121.421", 121.421, "+1000", 1001.020);
      }

      @ParameterizedTest(name = "{0}")
      @MethodSource("zoneOne")
      void shouldApplyPricingUpdatesForInstancesTypesForAvailabilityZone(
          String entry, Consumer<NodeOverlay.Spec> change, double expected) throws Exception {
        instanceTypes =
            List.of(
                type(
                    "default-instance-type",
                    "spot",
                    offering("test-zone-1", 1.020),
                    offering("test-zone-2", 5.020)));
        NodeOverlay overlay =
            with(overlay(null, 10, req(WellKnown.ZONE_LABEL, "In", "test-zone-1")), change);
        applied(nodePool, overlay);
        reconciled();
        List<InstanceType> types = applyAll(nodePool);
        assertThat(types).hasSize(1);
        assertThat(types.get(0).offerings()).hasSize(2);
        assertThat(priceIn(types.get(0), "test-zone-1")).isCloseTo(expected, within(1e-9));
        assertThat(priceIn(types.get(0), "test-zone-2")).isCloseTo(5.020, within(1e-9));
      }

      /** Upstream's three offerings (spot, on-demand, reserved), here a type each. */
      private void threeCapacityTypes() {
        instanceTypes =
            List.of(
                type("default-instance-type-spot", "spot", offering("test-zone-1", 1.020)),
                type(
                    "default-instance-type-on-demand", "on-demand", offering("test-zone-2", 2.020)),
                type("default-instance-type-reserved", "reserved", offering("test-zone-4", 4.020)));
      }

      static Stream<Arguments> multiple() {
        return Stream.of(
            Arguments.of("Price", price("121.421"), price("165.421"), 121.421, 121.421, 165.421),
            Arguments.of(
                "PriceAdjustment",
                priceAdjustment("+201"),
                priceAdjustment("-0.5"),
                203.020,
                205.020,
                0.52));
      }

      @ParameterizedTest(name = "{0}")
      @MethodSource("multiple")
      void shouldUpdatePriceUpdatesOfferingsInstanceTypesFromMultipleOverlays(
          String entry,
          Consumer<NodeOverlay.Spec> changeA,
          Consumer<NodeOverlay.Spec> changeB,
          double zoneTwo,
          double zoneFour,
          double spot)
          throws Exception {
        threeCapacityTypes();
        NodeOverlay a =
            with(
                overlay(null, 10, req(WellKnown.ZONE_LABEL, "In", "test-zone-2", "test-zone-4")),
                changeA);
        NodeOverlay b =
            with(overlay(null, 10, req(WellKnown.CAPACITY_TYPE_LABEL, "In", "spot")), changeB);
        applied(nodePool, a, b);
        reconciled();
        List<InstanceType> types = applyAll(nodePool);
        assertThat(types).hasSize(3);
        assertThat(priceIn(named(types, "default-instance-type-on-demand"), "test-zone-2"))
            .isCloseTo(zoneTwo, within(1e-9));
        assertThat(priceIn(named(types, "default-instance-type-reserved"), "test-zone-4"))
            .isCloseTo(zoneFour, within(1e-9));
        assertThat(priceIn(named(types, "default-instance-type-spot"), "test-zone-1"))
            .isCloseTo(spot, within(1e-9));
      }

      static Stream<Arguments> weighted() {
        return Stream.of(
            Arguments.of("Price", price("121.421"), price("165.421"), 121.421, 165.421),
            Arguments.of(
                "PriceAdjustment",
                priceAdjustment("+201"),
                priceAdjustment("-1.5"),
                203.020,
                2.520));
      }

      @ParameterizedTest(name = "{0}")
      @MethodSource("weighted")
      void shouldUpdatePriceUpdatesOfferingsInstanceTypesFromMultipleOverlaysWithDifferentWeights(
          String entry,
          Consumer<NodeOverlay.Spec> changeA,
          Consumer<NodeOverlay.Spec> changeB,
          double zoneTwo,
          double zoneFour)
          throws Exception {
        threeCapacityTypes();
        NodeOverlay a =
            with(
                overlay("a-test-100", 20, req(WellKnown.ZONE_LABEL, "In", "test-zone-2")), changeA);
        NodeOverlay b =
            with(
                overlay(
                    "b-test-100",
                    10,
                    req(WellKnown.ZONE_LABEL, "In", "test-zone-2", "test-zone-4")),
                changeB);
        applied(nodePool, a, b);
        reconciled();
        List<InstanceType> types = applyAll(nodePool);
        assertThat(types).hasSize(3);
        assertThat(priceIn(named(types, "default-instance-type-on-demand"), "test-zone-2"))
            .isCloseTo(zoneTwo, within(1e-9));
        assertThat(priceIn(named(types, "default-instance-type-reserved"), "test-zone-4"))
            .isCloseTo(zoneFour, within(1e-9));
      }

      static Stream<Arguments> partial() {
        return pricePairs("382", "100", "-23", "+10");
      }

      static Stream<Arguments> partialPools() {
        return pricePairs("382", "100", "+10", "-23");
      }

      private void expectPricesOverlaid(List<InstanceType> types) {
        assertThat(types).hasSize(6);
        assertThat(named(types, "default-instance-type").priceOverlaid()).isFalse();
        assertThat(named(types, "gpu-vendor-instance-type").priceOverlaid()).isTrue();
        assertThat(named(types, "gpu-vendor-b-instance-type").priceOverlaid()).isFalse();
        assertThat(named(types, "small-instance-type").priceOverlaid()).isTrue();
      }

      @ParameterizedTest(name = "{0}")
      @MethodSource("partial")
      void shouldNotPartialApplyInstanceTypesInANodepool(
          String entry, Consumer<NodeOverlay.Spec> changeA, Consumer<NodeOverlay.Spec> changeB)
          throws Exception {
        instanceTypes = null;
        NodeOverlay a =
            with(
                overlay(
                    "overlay-a",
                    10,
                    req(
                        WellKnown.INSTANCE_TYPE_LABEL,
                        "In",
                        "default-instance-type",
                        "small-instance-type",
                        "gpu-vendor-b-instance-type")),
                changeA);
        NodeOverlay b =
            with(
                overlay(
                    "overlay-b",
                    10,
                    req(
                        WellKnown.INSTANCE_TYPE_LABEL,
                        "In",
                        "small-instance-type",
                        "gpu-vendor-instance-type")),
                changeB);
        applied(nodePool, a, b);
        reconciled();
        expectConflict(a);
        expectValid(b);
        expectPricesOverlaid(applyAll(nodePool));
      }

      @ParameterizedTest(name = "{0}")
      @MethodSource("partialPools")
      void shouldNotPartialApplyForASubsetOfNodepools(
          String entry, Consumer<NodeOverlay.Spec> changeA, Consumer<NodeOverlay.Spec> changeB)
          throws Exception {
        instanceTypes = null;
        nodePool.getSpec().template.spec.requirements =
            List.of(
                req(
                    WellKnown.INSTANCE_TYPE_LABEL,
                    "In",
                    "default-instance-type",
                    "gpu-vendor-instance-type",
                    "gpu-vendor-b-instance-type"));
        nodePoolTwo.getSpec().template.spec.requirements =
            List.of(req(WellKnown.INSTANCE_TYPE_LABEL, "In", "gpu-vendor-b-instance-type"));
        NodeOverlay a =
            with(
                overlay(
                    "overlay-a",
                    10,
                    req(
                        WellKnown.INSTANCE_TYPE_LABEL,
                        "In",
                        "default-instance-type",
                        "small-instance-type",
                        "gpu-vendor-b-instance-type")),
                changeA);
        NodeOverlay b =
            with(
                overlay(
                    "overlay-b",
                    10,
                    req(
                        WellKnown.INSTANCE_TYPE_LABEL,
                        "In",
                        "small-instance-type",
                        "gpu-vendor-instance-type")),
                changeB);
        applied(nodePool, nodePoolTwo, a, b);
        reconciled();
        expectConflict(a);
        expectValid(b);
        expectPricesOverlaid(applyAll(nodePool));
        expectPricesOverlaid(applyAll(nodePoolTwo));
      }
    }

    @Nested
    class Capacity {
      private NodeOverlay fuse(Requirement selects) {
        return with(overlay(null, 10, selects), capacity("smarter-devices/fuse", "1"));
      }

      @Nested
      class Requirements {
        @Test
        void shouldOnlyApplyOverrideForNodepoolThatDefinedInTheOverlayRequirements()
            throws Exception {
          NodeOverlay overlay =
              fuse(req(WellKnown.NODEPOOL_LABEL, "In", nodePool.getMetadata().getName()));
          applied(nodePool, nodePoolTwo, overlay);
          reconciled();
          List<InstanceType> types = applyAll(nodePool);
          assertThat(types).hasSize(1);
          assertThat(extended(types.get(0), "smarter-devices/fuse")).isEqualTo(1L);
          assertThat(extended(applyAll(nodePoolTwo).get(0), "smarter-devices/fuse")).isNull();
        }

        @Test
        void shouldPassWithConflictingCapcaityUpdateOverlaysForAllNodepools() throws Exception {
          NodeOverlay a =
              fuse(req(WellKnown.NODEPOOL_LABEL, "In", nodePool.getMetadata().getName()));
          NodeOverlay b =
              with(
                  overlay(
                      null,
                      10,
                      req(WellKnown.NODEPOOL_LABEL, "In", nodePoolTwo.getMetadata().getName())),
                  capacity("dumb-devices/bar", "2"));
          applied(nodePool, nodePoolTwo, a, b);
          reconciled();
          assertThat(extended(applyAll(nodePool).get(0), "smarter-devices/fuse")).isEqualTo(1L);
          assertThat(extended(applyAll(nodePoolTwo).get(0), "dumb-devices/bar")).isEqualTo(2L);
        }

        @Test
        void
            shouldOnlyApplyPriceAdjustmentsForNodeclaimSpecLabelsThatDefinedInTheOverlayRequirements()
                throws Exception {
          nodePoolTwo.getSpec().template.metadata.labels = Map.of("test-label", "test-value");
          NodeOverlay overlay = fuse(req("test-label", "In", "test-value"));
          applied(nodePool, nodePoolTwo, overlay);
          reconciled();
          assertThat(extended(applyAll(nodePool).get(0), "smarter-devices/fuse")).isNull();
          assertThat(extended(applyAll(nodePoolTwo).get(0), "smarter-devices/fuse")).isEqualTo(1L);
        }
      }

      @Test
      void shouldNotApplyCapacityAdjustmentsForInvalidOverlay() throws Exception {
        NodeOverlay overlay = fuse(req("test.com.test/test-" + "x".repeat(250), "Exists"));
        applied(nodePool, overlay);
        reconciled();
        assertThat(extended(applyAll(nodePool).get(0), "smarter-devices/fuse")).isNull();
      }

      @Test
      void shouldNotApplyCapacityAdjustmentsForInstancesTypesThatDoNotOverlap() throws Exception {
        NodeOverlay overlay =
            fuse(req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type-not-found"));
        applied(nodePool, overlay);
        reconciled();
        assertThat(extended(applyAll(nodePool).get(0), "smarter-devices/fuse")).isNull();
      }

      @Test
      void shouldApplyCapacityAdjustmentsForInstancesTypes() throws Exception {
        NodeOverlay overlay =
            fuse(req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type"));
        applied(nodePool, overlay);
        reconciled();
        List<InstanceType> types = applyAll(nodePool);
        assertThat(types).hasSize(1);
        assertThat(types.get(0).offerings()).hasSize(1);
        assertThat(extended(types.get(0), "smarter-devices/fuse")).isEqualTo(1L);
        assertThat(types.get(0).capacityOverlaid()).isTrue();
      }

      /** Upstream's three types, one offering each (spot, on-demand, reserved). */
      private void zonedTypes() {
        instanceTypes =
            List.of(
                type("default-instance-type-zone-one", "spot", offering("test-zone-1", 1.020)),
                type("default-instance-type-zone-two", "on-demand", offering("test-zone-2", 2.020)),
                type(
                    "default-instance-type-zone-four", "reserved", offering("test-zone-4", 4.020)));
      }

      @Test
      void shouldUpdateCapacityForInstanceTypesFromMultipleOverlays() throws Exception {
        zonedTypes();
        NodeOverlay a = fuse(req(WellKnown.ZONE_LABEL, "In", "test-zone-2", "test-zone-4"));
        NodeOverlay b =
            with(
                overlay(null, 10, req(WellKnown.CAPACITY_TYPE_LABEL, "In", "spot")),
                capacity("hugepages-1Gi", "2Gi"));
        applied(nodePool, a, b);
        reconciled();
        List<InstanceType> types = applyAll(nodePool);
        assertThat(types).hasSize(3);
        InstanceType one = named(types, "default-instance-type-zone-one");
        assertThat(priceIn(one, "test-zone-1")).isCloseTo(1.020, within(1e-9));
        assertThat(extended(one, "hugepages-1Gi")).isEqualTo(2L << 30);
        InstanceType two = named(types, "default-instance-type-zone-two");
        assertThat(priceIn(two, "test-zone-2")).isCloseTo(2.020, within(1e-9));
        assertThat(extended(two, "smarter-devices/fuse")).isEqualTo(1L);
        InstanceType four = named(types, "default-instance-type-zone-four");
        assertThat(priceIn(four, "test-zone-4")).isCloseTo(4.020, within(1e-9));
        assertThat(extended(four, "smarter-devices/fuse")).isEqualTo(1L);
      }

      @Test
      void shouldUpdateCapacityForOneInstanceTypesFromMultipleOverlays() throws Exception {
        instanceTypes =
            List.of(type("default-instance-type-zone-one", "spot", offering("test-zone-1", 1.020)));
        NodeOverlay a =
            fuse(req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type-zone-one"));
        NodeOverlay b =
            with(
                overlay(
                    null,
                    10,
                    req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type-zone-one")),
                capacity("hugepages-1Gi", "2Gi"));
        applied(nodePool, a, b);
        reconciled();
        List<InstanceType> types = applyAll(nodePool);
        assertThat(types).hasSize(1);
        assertThat(priceIn(types.get(0), "test-zone-1")).isCloseTo(1.020, within(1e-9));
        assertThat(extended(types.get(0), "hugepages-1Gi")).isEqualTo(2L << 30);
        assertThat(extended(types.get(0), "smarter-devices/fuse")).isEqualTo(1L);
      }

      @Test
      void shouldUpdatePriceOfferingsInstanceTypesFromMultipleOverlaysWithDifferentWeights()
          throws Exception {
        zonedTypes();
        NodeOverlay a =
            with(
                overlay(null, 20, req(WellKnown.ZONE_LABEL, "In", "test-zone-2")),
                capacity("smarter-devices/fuse", "1"));
        NodeOverlay b =
            with(
                overlay(null, 10, req(WellKnown.ZONE_LABEL, "In", "test-zone-2", "test-zone-4")),
                capacity("hugepages-1Gi", "2Gi"));
        applied(nodePool, a, b);
        reconciled();
        List<InstanceType> types = applyAll(nodePool);
        assertThat(types).hasSize(3);
        InstanceType two = named(types, "default-instance-type-zone-two");
        assertThat(priceIn(two, "test-zone-2")).isCloseTo(2.020, within(1e-9));
        assertThat(extended(two, "smarter-devices/fuse")).isEqualTo(1L);
        InstanceType four = named(types, "default-instance-type-zone-four");
        assertThat(priceIn(four, "test-zone-4")).isCloseTo(4.020, within(1e-9));
        assertThat(extended(four, "hugepages-1Gi")).isEqualTo(2L << 30);
      }

      @Test
      void shouldApplyHigherWeightOverlayWhenMultipleOverlaysMatchTheSameInstanceType()
          throws Exception {
        NodeOverlay a =
            with(
                overlay(
                    "overlay-a",
                    10,
                    req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type")),
                capacity("smarter-devices/fuse", "5"));
        NodeOverlay b =
            with(
                overlay(
                    "overlay-b",
                    20,
                    req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type")),
                capacity("smarter-devices/fuse", "99"));
        applied(nodePool, a, b);
        reconciled();
        expectValid(a, b);
        List<InstanceType> types = applyAll(nodePool);
        assertThat(types).hasSize(1);
        assertThat(extended(types.get(0), "smarter-devices/fuse")).isEqualTo(99L);
      }

      private void expectCapacityOverlaid(List<InstanceType> types) {
        assertThat(types).hasSize(6);
        assertThat(named(types, "default-instance-type").capacityOverlaid()).isFalse();
        assertThat(named(types, "gpu-vendor-instance-type").capacityOverlaid()).isTrue();
        assertThat(named(types, "gpu-vendor-b-instance-type").capacityOverlaid()).isFalse();
        assertThat(named(types, "small-instance-type").capacityOverlaid()).isTrue();
      }

      private NodeOverlay buz(String name, String amount, String... types) {
        return with(
            overlay(name, 10, req(WellKnown.INSTANCE_TYPE_LABEL, "In", types)),
            capacity("smarter-devices/buz", amount));
      }

      @Test
      void shouldThatThereIsNotAPartialApplicationForInstanceTypes() throws Exception {
        instanceTypes = null;
        NodeOverlay a =
            buz(
                "overlay-a",
                "54",
                "default-instance-type",
                "small-instance-type",
                "gpu-vendor-b-instance-type");
        NodeOverlay b = buz("overlay-b", "21", "small-instance-type", "gpu-vendor-instance-type");
        applied(nodePool, a, b);
        reconciled();
        expectConflict(a);
        expectValid(b);
        expectCapacityOverlaid(applyAll(nodePool));
      }

      @Test
      void shouldThatThereIsNotAPartialApplicationForNodepools() throws Exception {
        instanceTypes = null;
        nodePool.getSpec().template.spec.requirements =
            List.of(
                req(
                    WellKnown.INSTANCE_TYPE_LABEL,
                    "In",
                    "default-instance-type",
                    "gpu-vendor-instance-type",
                    "gpu-vendor-b-instance-type"));
        nodePoolTwo.getSpec().template.spec.requirements =
            List.of(req(WellKnown.INSTANCE_TYPE_LABEL, "In", "gpu-vendor-b-instance-type"));
        NodeOverlay a = buz("overlay-a", "54", "default-instance-type", "small-instance-type");
        NodeOverlay b = buz("overlay-b", "21", "small-instance-type", "gpu-vendor-instance-type");
        applied(nodePool, nodePoolTwo, a, b);
        reconciled();
        expectConflict(a);
        expectValid(b);
        expectCapacityOverlaid(applyAll(nodePool));
        // upstream applies nodePoolTwo's types with nodePool's name here: as it does
        expectCapacityOverlaid(
            store.applyAll(nodePool.getMetadata().getName(), getInstanceTypes(nodePoolTwo)));
      }
    }

    @Test
    void shouldApplyPricingAndCapacityAdjustmentFromTwoOverlaysOnTheSameInstanceType()
        throws Exception {
      NodeOverlay price =
          with(
              overlay(null, 10, req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type")),
              priceAdjustment("+1000.0"));
      NodeOverlay capacity =
          with(
              overlay(null, 10, req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type")),
              capacity("smarter-devices/fuse", "1"));
      applied(nodePool, price, capacity);
      reconciled();
      List<InstanceType> types = applyAll(nodePool);
      assertThat(types).hasSize(1);
      assertThat(priceIn(types.get(0), "test-zone-1")).isCloseTo(1001.020, within(1e-9));
      assertThat(extended(types.get(0), "smarter-devices/fuse")).isEqualTo(1L);
    }

    @Test
    void shouldHaveAnEmptyInstanceTypesSetWhenCloudproviderDoesNotReturnInstanceTypes()
        throws Exception {
      instanceTypes = List.of();
      NodeOverlay overlay =
          with(
              overlay(null, 10, req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type")),
              capacity("smarter-devices/fuse", "1"));
      applied(nodePool, overlay);
      reconciled();
      assertThat(applyAll(nodePool)).isEmpty();
    }

    @Test
    void shouldHaveAnEmptyInstanceTypesSetWhenCloudproviderReturnAnError() {
      errorsForNodePool.put(
          nodePool.getMetadata().getName(), new IllegalStateException("test error"));
      NodeOverlay overlay =
          with(
              overlay(null, 10, req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type")),
              capacity("smarter-devices/fuse", "1"));
      applied(nodePool, overlay);
      reconciledFailed();
      assertThatThrownBy(() -> getInstanceTypes(nodePool)).hasMessage("test error");
      assertThatThrownBy(() -> store.applyAll(nodePool.getMetadata().getName(), List.of()))
          .isInstanceOf(CloudProviderException.UnevaluatedNodePool.class);
    }

    @Test
    void shouldNotReturnInstanceTypeRequirementsWithNodepoolNodeclassAndCustomNodepoolLabels()
        throws Exception {
      nodePool.getSpec().template.metadata.labels = Map.of("test-label", "test-value");
      NodeOverlay overlay =
          with(
              overlay(null, 10, req(WellKnown.INSTANCE_TYPE_LABEL, "In", "default-instance-type")),
              capacity("smarter-devices/fuse", "1"));
      applied(nodePool, overlay);
      reconciled();
      List<InstanceType> types = applyAll(nodePool);
      assertThat(types).hasSize(1);
      assertThat(types.get(0).capacityOverlaid()).isTrue();
      assertThat(types.get(0).labels())
          .doesNotContainKeys(
              WellKnown.NODEPOOL_LABEL, "warmmetal.io/warmmetalnodeclass", "test-label");
    }
  }

  // --- Describe("Failure Isolation")

  @Nested
  class FailureIsolation {
    private NodePool broken;

    @BeforeEach
    void brokenNodePool() {
      broken = nodePool();
      applied(nodePool, broken);
      errorsForNodePool.put(
          broken.getMetadata().getName(),
          new IllegalStateException("resolving node class, WarmMetalNodeClass not found"));
    }

    @Test
    void shouldEvaluateHealthyNodePoolsWhenOneNodePoolFailsGetInstanceTypes() throws Exception {
      reconciledFailed();
      assertThat(applyAll(nodePool)).hasSize(1);
      assertThatThrownBy(() -> getInstanceTypes(broken)).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> store.applyAll(broken.getMetadata().getName(), List.of()))
          .isInstanceOf(CloudProviderException.UnevaluatedNodePool.class);
    }

    @Test
    void shouldUpdateTheStoreEvenWhenOneNodePoolFails() throws Exception {
      store.reset(); // a fresh start: nothing evaluated
      assertThatThrownBy(() -> store.applyAll(nodePool.getMetadata().getName(), List.of()))
          .isInstanceOf(CloudProviderException.UnevaluatedNodePool.class);
      reconciledFailed();
      assertThat(applyAll(nodePool)).hasSize(1);
    }

    @Test
    void shouldUseNormalRequeueIntervalWhenAllNodePoolsSucceed() throws Exception {
      errorsForNodePool.clear();
      // no failure, nothing to do again: the controller evaluates again only when something changes
      assertThat(controller.reconcile()).isEqualTo(NodeOverlays.Outcome.EVALUATED);
    }

    @Test
    void shouldRecoverWhenAPreviouslyFailingNodePoolBecomesHealthy() throws Exception {
      reconciledFailed();
      assertThatThrownBy(() -> store.applyAll(broken.getMetadata().getName(), List.of()))
          .isInstanceOf(CloudProviderException.UnevaluatedNodePool.class);
      errorsForNodePool.remove(broken.getMetadata().getName());
      reconciled();
      assertThat(applyAll(nodePool)).hasSize(1);
      assertThat(applyAll(broken)).hasSize(1);
    }
  }
}
