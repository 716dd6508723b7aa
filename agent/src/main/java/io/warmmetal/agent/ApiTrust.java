package io.warmmetal.agent;

import io.warmmetal.protocol.CaPin;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import picocli.CommandLine.Option;

/**
 * How the agent knows the API before it sends its token: the CA pin, or the CA certificate itself
 * (a file the operator already trusts, e.g. on a volume shared with the API), whose pin is then
 * computed. Shared with the fleet simulator.
 */
public final class ApiTrust {
  @Option(
      names = "--ca-pin",
      defaultValue = "${env:WARMMETAL_AGENT_CA_PIN}",
      description = "sha256:<hex> of the API CA's public key (WARMMETAL_AGENT_CA_PIN)")
  String caPin;

  @Option(
      names = "--ca-file",
      defaultValue = "${env:WARMMETAL_AGENT_CA_FILE}",
      description = "the API CA's certificate (PEM), instead of its pin (WARMMETAL_AGENT_CA_FILE)")
  Path caFile;

  public boolean given() {
    return caPin != null || caFile != null;
  }

  /** The pin to verify the API by; fails naming the flags if neither or both are given. */
  public CaPin pin() throws IOException, GeneralSecurityException {
    if ((caPin == null) == (caFile == null)) {
      throw new IllegalArgumentException(
          "give the API's CA as --ca-pin or --ca-file (one of them)");
    }
    if (caPin != null) {
      return new CaPin(caPin);
    }
    try (InputStream in = Files.newInputStream(caFile)) {
      return CaPin.of(
          (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
  }
}
