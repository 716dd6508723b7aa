package io.warmmetal.api.enrollment;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.lifecycle.AgentCertificate;

/**
 * What enrolling or renewing answers an agent: {@code {machineId, certificate, caCertificate}}
 * (PEM).
 */
final class AgentCertificateJson {
  private AgentCertificateJson() {}

  static JsonObject from(AgentCertificate c) {
    return new JsonObject()
        .put("machineId", c.machineId())
        .put("certificate", c.certificatePem())
        .put("caCertificate", c.caCertificatePem());
  }
}
