package io.warmmetal.api.power;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.ssh.SshRunner;
import io.warmmetal.api.testing.IpmiSim;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Power through IPMI against OpenIPMI's BMC simulator, driven by ipmitool as a real BMC would be.
 */
@ExtendWith(VertxExtension.class)
@Tag("processes")
class IpmiPowerTest {
  private IpmiSim bmc;

  @BeforeEach
  void start() throws Exception {
    bmc = IpmiSim.start();
  }

  @AfterEach
  void stop() throws Exception {
    bmc.close();
  }

  @Test
  void switchesTheServerOnAndOffAndReportsItsPower(Vertx vertx) throws Exception {
    PowerDriver power =
        PowerDriver.ipmi(
            SshRunner.outOfBandWorkers(vertx),
            new IpmiTarget("127.0.0.1", bmc.port, IpmiSim.USER, IpmiSim.PASSWORD),
            Duration.ofSeconds(20));
    assertThat(power.status().await()).isEqualTo(PowerState.OFF);

    power.on().await();
    assertThat(bmc.poweredOn()).isTrue();
    assertThat(power.status().await()).isEqualTo(PowerState.ON);

    power.off().await();
    assertThat(bmc.poweredOn()).isFalse();
    assertThat(power.status().await()).isEqualTo(PowerState.OFF);
  }

  @Test
  void aWrongPasswordIsRefusedWithoutShowingIt(Vertx vertx) throws Exception {
    PowerDriver power =
        PowerDriver.ipmi(
            SshRunner.outOfBandWorkers(vertx),
            new IpmiTarget("127.0.0.1", bmc.port, IpmiSim.USER, "not-the-password"),
            Duration.ofSeconds(20));
    assertThatThrownBy(() -> power.on().await())
        .hasMessageContaining("refused 'chassis power on'")
        .hasMessageNotContaining("not-the-password");
    assertThat(bmc.poweredOn()).isFalse();
  }
}
