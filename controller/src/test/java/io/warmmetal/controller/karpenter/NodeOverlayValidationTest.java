package io.warmmetal.controller.karpenter;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Karpenter's own NodeOverlay validation cases, from {@code
 * pkg/apis/v1alpha1/nodeoverlay_validation_test.go} (each named as upstream's {@code It}): where
 * upstream expects the API server to refuse it ({@code Create}), it has schema problems here; where
 * upstream expects {@code RuntimeValidate} to fail, it has runtime problems.
 */
class NodeOverlayValidationTest {
  /** A key upstream makes with 250 random lowercase alphanumerics. */
  private static final String LONG = "a1b2c3d4e5".repeat(25);

  private NodeOverlay overlay;

  /** Upstream's starting overlay: one capacity-type requirement. */
  @BeforeEach
  void base() {
    overlay = new NodeOverlay();
    overlay.getMetadata().setName("overlay");
    overlay.getSpec().requirements =
        new ArrayList<>(List.of(req(WellKnown.CAPACITY_TYPE_LABEL, "Exists")));
  }

  private static Requirement req(String key, String op, String... values) {
    return new Requirement(key, op, List.of(values));
  }

  private void requirements(Requirement... r) {
    overlay.getSpec().requirements = new ArrayList<>(List.of(r));
  }

  /** Whether the API server (1.25+) stores it: the CRD's schema and CEL rules pass. */
  private boolean created() {
    return NodeOverlayValidation.schemaProblems(overlay).isEmpty();
  }

  /** Whether upstream's {@code RuntimeValidate} passes. */
  private boolean runtimeValid() {
    return NodeOverlayValidation.runtimeProblems(overlay).isEmpty();
  }

  // Requirements

  @Test
  void shouldFailForNoValuesForInOperator() {
    requirements(req("Test", "In"));
    assertThat(created()).isFalse();
    assertThat(runtimeValid()).isFalse();
  }

  @Test
  void shouldFailForNoValuesForNotInOperator() {
    requirements(req("Test", "NotIn"));
    assertThat(created()).isFalse();
    assertThat(runtimeValid()).isFalse();
  }

  @Test
  void shouldSucceedForValidRequirementKeys() {
    requirements(req("Test", "Exists"));
    assertThat(created()).isTrue();
    assertThat(runtimeValid()).isTrue();
    requirements(
        req("Test", "Exists"),
        req("test.com/Test", "Exists"),
        req("test.com.com/test", "Exists"),
        req("key-only", "Exists"));
    assertThat(created()).isTrue();
    assertThat(runtimeValid()).isTrue();
  }

  @Test
  void shouldFailForInvalidRequirementKeys() {
    for (String key :
        List.of("test.com.com}", "Test.com/test", "test/test/test", "test/", "/test")) {
      requirements(req(key, "Exists"));
      assertThat(created()).as(key).isFalse();
      assertThat(runtimeValid()).as(key).isFalse();
    }
  }

  @Test
  void shouldAllowForTheKarpenterShNodepoolLabel() {
    requirements(req(WellKnown.NODEPOOL_LABEL, "In", "silly-name"));
    assertThat(created()).isTrue();
    assertThat(runtimeValid()).isTrue();
  }

  @Test
  void shouldFailAtRuntimeForRequirementKeysThatAreTooLong() {
    requirements(req("test.com.test." + LONG + "/test", "Exists"));
    assertThat(created()).isTrue();
    assertThat(runtimeValid()).isFalse();
    requirements(req("test.com.test/test-" + LONG, "Exists"));
    assertThat(created()).isTrue();
    assertThat(runtimeValid()).isFalse();
  }

  @Test
  void shouldAllowSupportedOps() {
    requirements(
        req(WellKnown.ZONE_LABEL, "In", "test"),
        req(WellKnown.ZONE_LABEL, "Gt", "1"),
        req(WellKnown.ZONE_LABEL, "Lt", "1"),
        req(WellKnown.ZONE_LABEL, "Gte", "1"),
        req(WellKnown.ZONE_LABEL, "Lte", "1"),
        req(WellKnown.ZONE_LABEL, "NotIn", "1"),
        req(WellKnown.ZONE_LABEL, "Exists"));
    assertThat(created()).isTrue();
    assertThat(runtimeValid()).isTrue();
  }

  @Test
  void shouldFailForUnsupportedOps() {
    requirements(req(WellKnown.ZONE_LABEL, "unknown", "test"));
    assertThat(created()).isFalse();
    assertThat(runtimeValid()).isFalse();
  }

  @Test
  void shouldFailForRestrictedDomains() {
    requirements(req("karpenter.sh/test", "In", "test"));
    assertThat(created()).isFalse();
    assertThat(runtimeValid()).isFalse();
  }

  @Test
  void shouldAllowKubernetesDomainsExceptions() {
    for (String domain : List.of("kubernetes.io", "k8s.io")) {
      requirements(req(domain + "/test", "In", "test"));
      assertThat(created()).as(domain).isTrue();
      assertThat(runtimeValid()).as(domain).isTrue();
    }
  }

  @Test
  void shouldAllowKubernetesSubdomainsExceptions() {
    for (String domain : List.of("kubernetes.io", "k8s.io")) {
      requirements(req("subdomain." + domain + "/test", "In", "test"));
      assertThat(created()).as(domain).isTrue();
      assertThat(runtimeValid()).as(domain).isTrue();
    }
  }

  @Test
  void shouldAllowWellKnownLabelExceptions() {
    // Capacity type is runtime validated (its values are known)
    Set<String> labels = new HashSet<>(NodeOverlayValidation.WELL_KNOWN_LABELS);
    labels.removeAll(Set.of(WellKnown.NODEPOOL_LABEL, WellKnown.CAPACITY_TYPE_LABEL));
    for (String label : labels) {
      requirements(req(label, "In", "test"));
      assertThat(created()).as(label).isTrue();
      assertThat(runtimeValid()).as(label).isTrue();
    }
  }

  @Test
  void shouldAllowNonEmptySetAfterRemovingOverlappedValue() {
    requirements(
        req(WellKnown.ZONE_LABEL, "In", "test", "foo"),
        req(WellKnown.ZONE_LABEL, "NotIn", "test", "bar"));
    assertThat(created()).isTrue();
    assertThat(runtimeValid()).isTrue();
  }

  @Test
  void shouldAllowEmptyRequirements() {
    requirements(req("test", "Exists"));
    assertThat(created()).isTrue();
    assertThat(runtimeValid()).isTrue();
  }

  @Test
  void shouldFailWithInvalidGtOrLtValues() {
    invalidOrdering("Gt", "Lt");
  }

  @Test
  void shouldFailWithInvalidGteOrLteValues() {
    invalidOrdering("Gte", "Lte");
  }

  private void invalidOrdering(String... operators) {
    for (String op : operators) {
      for (List<String> values :
          List.of(List.<String>of(), List.of("1", "2"), List.of("a"), List.of("-1"))) {
        requirements(new Requirement(WellKnown.ZONE_LABEL, op, values));
        assertThat(created()).as(op + " " + values).isFalse();
        assertThat(runtimeValid()).as(op + " " + values).isFalse();
      }
    }
  }

  @Test
  void shoutNotBeAbleToSetBothPriceAndPriceAdjustment() {
    overlay.getSpec().price = "0.432";
    overlay.getSpec().priceAdjustment = "+10%";
    assertThat(created()).isFalse();
  }

  // priceAdjustment

  /** Upstream's table sets {@code price} with these (its priceAdjustment table does, too). */
  @ParameterizedTest(name = "Invalid Input: {0}")
  @ValueSource(
      strings = {
        "+42",
        ".5",
        "42.",
        "42%",
        "3,14",
        "1e10",
        "0x42",
        "forty-two",
        "42a",
        "42 ",
        " 42",
        "42.0.0",
        "-",
        ".",
        "-100.0%",
        "-101.1%",
        "-129"
      })
  void priceAdjustmentInvalidInput(String input) {
    overlay.getSpec().price = input;
    assertThat(created()).isFalse();
  }

  @Test
  void shouldNotAllowAnUnsignedPriceAdjustmentPercentage() {
    overlay.getSpec().priceAdjustment = "1%";
    assertThat(created()).isFalse();
  }

  @Test
  void shouldNotAllowAnUnsignedPriceAdjustmentInteger() {
    overlay.getSpec().priceAdjustment = "1";
    assertThat(created()).isFalse();
  }

  @Test
  void shouldNotAllowAnUnsignedPriceAdjustmentFloat() {
    overlay.getSpec().priceAdjustment = "1.3";
    assertThat(created()).isFalse();
  }

  @Test
  void shouldAllowPositivePercentageValueForPriceAdjustmentField() {
    overlay.getSpec().priceAdjustment = "+1%";
    assertThat(created()).isTrue();
  }

  @Test
  void shouldAllowNegativePercentageLessThen0() {
    overlay.getSpec().priceAdjustment = "-1%";
    assertThat(created()).isTrue();
  }

  @Test
  void shouldAllowNegativePercentage100() {
    overlay.getSpec().priceAdjustment = "-100%";
    assertThat(created()).isTrue();
  }

  @Test
  void shouldAllowPositivePercentageGreaterThen100() {
    overlay.getSpec().priceAdjustment = "+100.102%";
    assertThat(created()).isTrue();
  }

  @Test
  void shouldAllowPositivePercentageGreaterThen100WithAnInteger() {
    overlay.getSpec().priceAdjustment = "+298%";
    assertThat(created()).isTrue();
  }

  @Test
  void shouldAllowPositiveIntegerValue() {
    overlay.getSpec().priceAdjustment = "+43";
    assertThat(created()).isTrue();
  }

  @Test
  void shouldAllowNegativeIntegerValue() {
    overlay.getSpec().priceAdjustment = "-43";
    assertThat(created()).isTrue();
  }

  @Test
  void shouldAllowPositiveFloatValue() {
    overlay.getSpec().priceAdjustment = "+34.43";
    assertThat(created()).isTrue();
  }

  @Test
  void shouldAllowNegativeFloatValue() {
    overlay.getSpec().priceAdjustment = "-34.43";
    assertThat(created()).isTrue();
  }

  @Test
  void priceAdjustmentBelowMinus100PercentIsRefused() {
    // not upstream's (its table tries these as a price): its pattern refuses them as an adjustment
    for (String adjustment : List.of("-101.1%", "-100.0%", "-129%")) {
      overlay.getSpec().priceAdjustment = adjustment;
      assertThat(created()).as(adjustment).isFalse();
    }
  }

  // price

  @ParameterizedTest(name = "Invalid Input: {0}")
  @ValueSource(
      strings = {
        "+42",
        ".5",
        "42.",
        "42%",
        "3,14",
        "1e10",
        "0x42",
        "forty-two",
        "42a",
        "42 ",
        " 42",
        "42.0.0",
        "-",
        ".",
        "-.42"
      })
  void priceInvalidInput(String input) {
    overlay.getSpec().price = input;
    assertThat(created()).isFalse();
  }

  @Test
  void shouldAllowIntegerValue() {
    overlay.getSpec().price = "43";
    assertThat(created()).isTrue();
  }

  @Test
  void shouldAllowFloatValue() {
    overlay.getSpec().price = "34.43";
    assertThat(created()).isTrue();
  }

  // Capacity

  @Test
  void shouldAllowCustomResources() {
    overlay.getSpec().capacity = Map.of("smarter-devices/fuse", new Quantity("1"));
    assertThat(created()).isTrue();
    assertThat(runtimeValid()).isTrue();
  }

  @Test
  void shouldNotAllowCpuResourcesOverride() {
    overlay.getSpec().capacity = Map.of("cpu", new Quantity("1"));
    assertThat(created()).isFalse();
    assertThat(runtimeValid()).isFalse();
  }

  @Test
  void shouldNotAllowMemoryResourcesOverride() {
    overlay.getSpec().capacity = Map.of("memory", new Quantity("34Gi"));
    assertThat(created()).isFalse();
    assertThat(runtimeValid()).isFalse();
  }

  @Test
  void shouldNotAllowPodResourcesOverride() {
    overlay.getSpec().capacity = Map.of("pods", new Quantity("324"));
    assertThat(created()).isFalse();
    assertThat(runtimeValid()).isFalse();
  }
}
