package io.warmmetal.controller.scheduling;

/**
 * A host port a pod's container binds on its node. Two conflict, as kube-scheduler's NodePorts
 * filter has it, when protocol and port are the same and their host IPs overlap (an unset or
 * wildcard IP overlaps every IP).
 */
public record HostPort(String ip, String protocol, int port) {
  private static final String ANY = "0.0.0.0";

  public HostPort {
    ip = ip == null || ip.isEmpty() ? ANY : ip;
    protocol = protocol == null || protocol.isEmpty() ? "TCP" : protocol;
  }

  public boolean conflictsWith(HostPort other) {
    return port == other.port
        && protocol.equals(other.protocol)
        && (wildcard(ip) || wildcard(other.ip) || ip.equals(other.ip));
  }

  /** An unspecified address, IPv4 or IPv6: every address of the node. */
  private static boolean wildcard(String ip) {
    return ip.equals(ANY) || ip.equals("::");
  }
}
