package io.warmmetal.api.power;

import io.warmmetal.protocol.CaPin;

/**
 * A BMC reached by Redfish over HTTPS: address, port, credentials (a secret), the pin its TLS
 * certificate (or that certificate's CA) must match, and the ComputerSystem to switch.
 */
public record RedfishTarget(
    String host, int port, String username, String password, CaPin tlsPin, String systemId) {
  @Override
  public String toString() {
    return username + "@" + host + ":" + port + " (system " + systemId + ")"; // never the password
  }
}
