package io.warmmetal.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** {@code --feature-gates} reads upstream's syntax and names. */
class FeatureGatesTest {
  @Test
  void upstreamsDefaultsLeaveRepairAndOverlaysOff() {
    assertThat(FeatureGates.parse("")).isEqualTo(FeatureGates.DEFAULT);
    assertThat(
            FeatureGates.parse(
                "NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=false,"
                    + "NodeOverlay=false,StaticCapacity=false,CapacityBuffer=false"))
        .isEqualTo(new FeatureGates(false, false));
  }

  @Test
  void eachGateIsReadOnItsOwn() {
    assertThat(FeatureGates.parse("NodeRepair=true")).isEqualTo(new FeatureGates(true, false));
    assertThat(FeatureGates.parse(" NodeOverlay=True , NodeRepair=false "))
        .isEqualTo(new FeatureGates(false, true));
  }

  @Test
  void aGateOfAnotherKarpenterVersionIsIgnored() {
    assertThat(FeatureGates.parse("SomeFutureGate=true,NodeRepair=true"))
        .isEqualTo(new FeatureGates(true, false));
  }

  @Test
  void aPairThatIsNotNameEqualsBooleanIsRefusedByName() {
    assertThatThrownBy(() -> FeatureGates.parse("NodeRepair")).hasMessageContaining("'NodeRepair'");
    assertThatThrownBy(() -> FeatureGates.parse("NodeRepair=yes"))
        .hasMessageContaining("NodeRepair must be true or false");
  }
}
