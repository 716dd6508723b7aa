package io.warmmetal.api.power;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.RedfishBmc;
import io.warmmetal.protocol.CaPin;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Redfish driver against an HTTPS BMC on loopback: power observed and switched; pins and
 * credentials held to.
 */
@ExtendWith(VertxExtension.class)
class RedfishPowerTest {
  private static PowerDriver driver(Vertx vertx, RedfishBmc bmc, String password, CaPin pin) {
    return PowerDriver.redfish(
        vertx,
        new RedfishTarget("127.0.0.1", bmc.port, RedfishBmc.USER, password, pin, "1"),
        Duration.ofSeconds(10));
  }

  @Test
  void switchesAndObservesPowerTrustingTheBmcByItsCaOrItsOwnKey(Vertx vertx) {
    try (RedfishBmc bmc = RedfishBmc.start(vertx)) {
      PowerDriver byCa = driver(vertx, bmc, RedfishBmc.PASSWORD, bmc.caPin);
      assertThat(byCa.status().await()).isEqualTo(PowerState.OFF);
      byCa.on().await();
      assertThat(bmc.poweredOn()).isTrue();
      assertThat(byCa.status().await()).isEqualTo(PowerState.ON);
      PowerDriver byLeaf = driver(vertx, bmc, RedfishBmc.PASSWORD, bmc.leafPin);
      byLeaf.off().await();
      assertThat(bmc.poweredOn()).isFalse();
      assertThat(bmc.resets()).isEqualTo(2);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void anotherCertificateOrAWrongPasswordIsRefusedWithoutSwitchingAnything(Vertx vertx)
      throws Exception {
    try (RedfishBmc bmc = RedfishBmc.start(vertx)) {
      CaPin stranger = new CaPin("sha256:" + "ab".repeat(32));
      assertThatThrownBy(() -> driver(vertx, bmc, RedfishBmc.PASSWORD, stranger).on().await())
          .hasMessageContaining("could not be reached");
      assertThatThrownBy(() -> driver(vertx, bmc, "wrong-password", bmc.caPin).on().await())
          .hasMessageContaining("refused the credentials")
          .hasMessageNotContaining("wrong-password");
      assertThat(bmc.resets()).isZero();
      assertThat(bmc.poweredOn()).isFalse();
    }
  }
}
