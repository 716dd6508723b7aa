package io.warmmetal.api.ssh;

/**
 * A server to reach over SSH: where, as whom, with which private key (OpenSSH or PEM text; a
 * secret), and the host key it must present ({@code SHA256:…}, as {@code ssh-keygen -lf} prints
 * it). There is no way to skip the host key check.
 */
public record SshTarget(
    String host, int port, String user, String privateKey, String hostKeyFingerprint) {
  public SshTarget {
    if (hostKeyFingerprint == null || !hostKeyFingerprint.startsWith("SHA256:")) {
      throw new IllegalArgumentException("a host key fingerprint (SHA256:…) is required");
    }
  }

  @Override
  public String toString() {
    return user
        + "@"
        + host
        + ":"
        + port
        + " (host key "
        + hostKeyFingerprint
        + ")"; // never the key
  }
}
