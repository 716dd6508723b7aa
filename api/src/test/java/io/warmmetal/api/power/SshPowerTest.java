package io.warmmetal.api.power;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.ssh.SshRunner;
import io.warmmetal.api.ssh.SshTarget;
import io.warmmetal.api.testing.Sshd;
import io.warmmetal.protocol.testing.Await;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Power without a BMC: off over a real sshd (the off command is this test's marker), on by
 * Wake-on-LAN.
 */
@ExtendWith(VertxExtension.class)
@Tag("processes")
class SshPowerTest {

  @Test
  void offRunsOverSshOnWakesTheNicAndStatusIsWhetherSshAnswers(Vertx vertx) throws Exception {
    Path marker = Files.createTempDirectory("ssh-power").resolve("powered-off");
    try (Sshd sshd = Sshd.start();
        SshRunner ssh = SshRunner.create(vertx);
        DatagramSocket nic = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
      SshTarget target =
          new SshTarget("127.0.0.1", sshd.port, sshd.user, sshd.clientKey, sshd.hostKeyFingerprint);
      PowerDriver power =
          PowerDriver.ssh(
              vertx,
              ssh,
              target,
              "touch " + marker,
              "52:54:00:ab:cd:ef",
              "127.0.0.1",
              nic.getLocalPort(),
              Duration.ofSeconds(20));
      assertThat(power.status().await()).isEqualTo(PowerState.ON);
      power.off().await();
      Await.until("the off command ran", () -> Files.exists(marker));

      nic.setSoTimeout(5_000);
      power.on().await();
      DatagramPacket packet = new DatagramPacket(new byte[256], 256);
      nic.receive(packet);
      assertThat(Arrays.copyOf(packet.getData(), packet.getLength()))
          .isEqualTo(WakeOnLan.packet("52:54:00:ab:cd:ef"));

      sshd.close();
      assertThat(power.status().await()).isEqualTo(PowerState.OFF);
    }
  }
}
