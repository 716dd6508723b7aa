package io.warmmetal.controller.nodeoverlay;

import static io.warmmetal.controller.nodeoverlay.NodeOverlaysTest.offering;
import static io.warmmetal.controller.nodeoverlay.NodeOverlaysTest.type;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.fabric8.kubernetes.api.model.Quantity;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.karpenter.NodeOverlay;
import io.warmmetal.controller.scheduling.InstanceType;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Upstream's store cases ({@code pkg/controllers/nodeoverlay/store_test.go}), one test per {@code
 * It} (the selective-copy table over its entries): what a store holding given updates makes of an
 * instance type. Upstream's pointer sharing is Go's; here what is not changed is the same object,
 * and the original is never changed (records).
 */
class InstanceTypeStoreTest {
  private static final String HUGEPAGES = "hugepages-2Mi";

  private static InstanceType m5Large() {
    return type("m5.large", "on-demand", offering("us-west-2a", 0.096));
  }

  /** A store that evaluated {@code pool}, with these changes to one type there. */
  private static InstanceTypeStore store(
      String pool, String type, Map<String, String> prices, Map<String, Long> capacity) {
    Updates updates = new Updates();
    updates.evaluated.add(pool);
    put(updates, pool, type, prices, capacity);
    InstanceTypeStore store = new InstanceTypeStore();
    store.update(updates);
    return store;
  }

  private static void put(
      Updates updates,
      String pool,
      String type,
      Map<String, String> prices,
      Map<String, Long> capacity) {
    Updates.TypeUpdate update = new Updates.TypeUpdate();
    prices.forEach((key, change) -> update.prices.put(key, new Updates.PriceUpdate(change, 10)));
    if (!capacity.isEmpty()) {
      update.capacity = new Updates.CapacityUpdate();
      update.capacity.added.putAll(capacity);
    }
    updates.updates.computeIfAbsent(pool, p -> new HashMap<>()).put(type, update);
  }

  private static String key(InstanceType type, int offering) {
    return Updates.offeringKey(type.offerings().get(offering));
  }

  @Nested
  class StoreApplySelectiveCopy {
    static Stream<Arguments> scenarios() {
      InstanceType type = m5Large();
      Map<String, String> price = Map.of(key(type, 0), "+0.01");
      Map<String, Long> capacity = Map.of(HUGEPAGES, 100L << 20);
      return Stream.of(
          Arguments.of("no overlays - everything shared", Map.of(), Map.of(), true, true),
          Arguments.of(
              "price overlay only - offerings copied, others shared", price, Map.of(), false, true),
          Arguments.of(
              "capacity overlay only - capacity copied, others shared",
              Map.of(),
              capacity,
              true,
              false),
          Arguments.of(
              "both overlays - only modified fields copied", price, capacity, false, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void shouldHandleDifferentOverlayScenarios(
        String name,
        Map<String, String> prices,
        Map<String, Long> capacity,
        boolean sharedOffering,
        boolean sharedCapacity)
        throws Exception {
      InstanceType type = m5Large();
      InstanceType result = store("default", type.name(), prices, capacity).apply("default", type);
      assertThat(result.labels()).as("requirements").isSameAs(type.labels());
      if (sharedOffering) {
        assertThat(result.offerings()).isSameAs(type.offerings());
      } else {
        assertThat(result.offerings().get(0)).isNotSameAs(type.offerings().get(0));
      }
      if (sharedCapacity) {
        assertThat(result.allocatable()).isSameAs(type.allocatable());
      } else {
        assertThat(result.allocatable()).isNotSameAs(type.allocatable());
      }
    }
  }

  @Nested
  class StoreApplyCorrectness {
    @Test
    void shouldCorrectlyApplyPriceOverlayToSpecificOfferings() throws Exception {
      InstanceType type =
          type(
              "m5.large",
              "on-demand",
              offering("us-west-2a", 0.096),
              offering("us-west-2b", 0.096));
      InstanceType result =
          store("default", type.name(), Map.of(key(type, 0), "+0.01"), Map.of())
              .apply("default", type);
      assertThat(result.priceOf(result.offerings().get(0))).isCloseTo(0.106, within(1e-12));
      assertThat(result.offerings().get(0).priceOverlaid()).isTrue();
      assertThat(result.priceOf(result.offerings().get(1))).isEqualTo(0.096);
      assertThat(result.offerings().get(1).priceOverlaid()).isFalse();
      assertThat(type.priceOf(type.offerings().get(0))).as("the original").isEqualTo(0.096);
    }

    @Test
    void shouldCorrectlyApplyCapacityOverlay() throws Exception {
      InstanceType type = m5Large();
      InstanceType result =
          store("default", type.name(), Map.of(), Map.of(HUGEPAGES, 100L << 20))
              .apply("default", type);
      assertThat(result.allocatable().extended()).containsEntry(HUGEPAGES, 100L << 20);
      assertThat(result.allocatable().memoryBytes()).isEqualTo(type.allocatable().memoryBytes());
      assertThat(result.allocatable().cpuMilli()).isEqualTo(type.allocatable().cpuMilli());
      assertThat(type.allocatable().extended()).as("the original").doesNotContainKey(HUGEPAGES);
    }
  }

  @Nested
  class StoreApplyIsolationBetweenNodePools {
    @Test
    void shouldApplyDifferentOverlaysToDifferentNodePools() throws Exception {
      InstanceType type = m5Large();
      Updates updates = new Updates();
      updates.evaluated.addAll(List.of("nodepool-a", "nodepool-b"));
      put(updates, "nodepool-a", type.name(), Map.of(key(type, 0), "+10%"), Map.of());
      put(updates, "nodepool-b", type.name(), Map.of(key(type, 0), "-5%"), Map.of());
      InstanceTypeStore store = new InstanceTypeStore();
      store.update(updates);
      InstanceType a = store.apply("nodepool-a", type);
      InstanceType b = store.apply("nodepool-b", type);
      assertThat(a.priceOf(a.offerings().get(0))).isCloseTo(0.1056, within(0.0001));
      assertThat(b.priceOf(b.offerings().get(0))).isCloseTo(0.0912, within(0.0001));
      assertThat(type.priceOf(type.offerings().get(0))).isEqualTo(0.096);
      assertThat(a.offerings().get(0)).isNotSameAs(b.offerings().get(0));
    }
  }

  @Nested
  class StoreApplyUnevaluatedNodePool {
    @Test
    void shouldReturnErrorForUnevaluatedNodePool() {
      InstanceTypeStore store = new InstanceTypeStore();
      store.update(new Updates());
      assertThatThrownBy(() -> store.apply("unevaluated", m5Large()))
          .isInstanceOf(CloudProviderException.UnevaluatedNodePool.class)
          .hasMessage("nodepool \"unevaluated\" is awaiting evaluation");
    }
  }

  @Nested
  class NodeOverlayStoreIntegration {
    @Test
    void shouldIntegrateOverlaysThroughThePublicInterface() throws Exception {
      InstanceType large =
          type(
              "m5.large",
              "on-demand",
              offering("us-west-2a", 0.096),
              offering("us-west-2b", 0.0288));
      InstanceType xlarge = type("m5.xlarge", "on-demand", offering("us-west-2a", 0.192));
      NodeOverlay overlay = new NodeOverlay();
      overlay.getSpec().weight = 100;
      overlay.getSpec().capacity = Map.of(HUGEPAGES, new Quantity("100Mi"));
      // what the controller does: capacity for m5.large, and a price for its second offering only
      Updates updates = new Updates();
      updates.evaluated.add("default");
      updates.capacity("default", "m5.large", overlay, NodeOverlays.capacity(overlay));
      updates.price("default", "m5.large", List.of(large.offerings().get(1)), overlay);
      InstanceTypeStore store = new InstanceTypeStore();
      store.update(updates);
      List<InstanceType> results = store.applyAll("default", List.of(large, xlarge));
      assertThat(results.get(0).allocatable().extended()).containsEntry(HUGEPAGES, 100L << 20);
      assertThat(results.get(1).allocatable().extended()).doesNotContainKey(HUGEPAGES);
      assertThat(large.allocatable().extended()).as("the original").doesNotContainKey(HUGEPAGES);
    }
  }

  @Test
  void adjustedPricesAreUpstreamsAdjustedPrice() {
    // not an upstream It: its AdjustedPrice, which the cases above go through
    assertThat(Updates.adjusted(2, "3.5")).isEqualTo(3.5);
    assertThat(Updates.adjusted(2, "+10%")).isCloseTo(2.2, within(1e-12));
    assertThat(Updates.adjusted(2, "-100%")).isEqualTo(0);
    assertThat(Updates.adjusted(2, "-5")).as("never below 0").isEqualTo(0);
    assertThat(Updates.adjusted(2, "")).isEqualTo(2);
  }
}
