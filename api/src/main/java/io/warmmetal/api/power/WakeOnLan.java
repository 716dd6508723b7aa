package io.warmmetal.api.power;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * Wake-on-LAN: the magic packet (six 0xFF bytes, then the NIC's MAC sixteen times) sent by UDP to a
 * broadcast address (port 9, discard, by convention) — how a server powered off by SSH is woken
 * again. Blocking: call it from a worker thread.
 */
public final class WakeOnLan {
  private WakeOnLan() {}

  /** The magic packet for {@code mac} ({@code aa:bb:cc:dd:ee:ff} or with dashes). */
  public static byte[] packet(String mac) {
    String hex = mac.replace(":", "").replace("-", "");
    if (!hex.matches("[0-9a-fA-F]{12}")) {
      throw new IllegalArgumentException("not a MAC address: " + mac);
    }
    byte[] address = HexFormat.of().parseHex(hex);
    byte[] packet = new byte[6 + 16 * 6];
    Arrays.fill(packet, 0, 6, (byte) 0xff);
    for (int i = 0; i < 16; i++) {
      System.arraycopy(address, 0, packet, 6 + i * 6, 6);
    }
    return packet;
  }

  /**
   * Sends the packet for {@code mac} to {@code target}:{@code port}, e.g. the server's subnet
   * broadcast, port 9.
   */
  public static void wake(String mac, InetAddress target, int port) throws IOException {
    byte[] packet = packet(mac);
    try (DatagramSocket socket = new DatagramSocket()) {
      socket.setBroadcast(true);
      socket.send(new DatagramPacket(packet, packet.length, target, port));
    }
  }
}
