package io.warmmetal.api.power;

/**
 * A BMC reached by IPMI over LAN (lanplus): its address, port (623 by default) and credentials (a
 * secret).
 */
public record IpmiTarget(String host, int port, String username, String password) {
  @Override
  public String toString() {
    return username + "@" + host + ":" + port; // never the password
  }
}
