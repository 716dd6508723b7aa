package io.warmmetal.api.lifecycle;

/**
 * An agent asking to join the fleet: its enrollment token, its certificate request (PEM) and its
 * host.
 */
public record EnrollmentRequest(String token, String csrPem, Host host) {
  @Override
  public String toString() {
    return "EnrollmentRequest[" + host.name() + "]"; // never the token
  }
}
