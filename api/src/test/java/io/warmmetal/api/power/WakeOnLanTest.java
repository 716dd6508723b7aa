package io.warmmetal.api.power;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The magic packet, sent over a real UDP socket on loopback to a listener that checks it. */
class WakeOnLanTest {

  @Test
  void theMagicPacketIsSixFfsThenTheMacSixteenTimes() throws Exception {
    try (DatagramSocket listener = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
      listener.setSoTimeout(5_000);
      WakeOnLan.wake(
          "52:54:00:12:34:56", InetAddress.getLoopbackAddress(), listener.getLocalPort());
      DatagramPacket received = new DatagramPacket(new byte[256], 256);
      listener.receive(received);
      byte[] p = Arrays.copyOf(received.getData(), received.getLength());
      assertThat(p).hasSize(102);
      assertThat(Arrays.copyOfRange(p, 0, 6)).containsOnly((byte) 0xff);
      byte[] mac = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
      for (int i = 0; i < 16; i++) {
        assertThat(Arrays.copyOfRange(p, 6 + i * 6, 12 + i * 6)).containsExactly(mac);
      }
    }
    assertThat(WakeOnLan.packet("52-54-00-12-34-56"))
        .isEqualTo(WakeOnLan.packet("52:54:00:12:34:56"));
    assertThatThrownBy(() -> WakeOnLan.packet("52:54:00:12:34"))
        .hasMessageContaining("not a MAC address");
  }
}
