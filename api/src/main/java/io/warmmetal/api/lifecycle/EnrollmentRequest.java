package io.warmmetal.api.lifecycle;

import io.vertx.core.json.JsonObject;

/**
 * An agent asking to join the fleet: its enrollment token, its certificate request (PEM) and what it reports about
 * itself (name, address, facts, identity), as validated by the agent port's contract.
 */
public record EnrollmentRequest(String token, String csrPem, JsonObject machine) {
  @Override
  public String toString() {
    return "EnrollmentRequest[" + machine.getString("name") + "]"; // never the token
  }
}
