package io.warmmetal.api.lifecycle;

/**
 * What enrolling (or renewing) hands an agent: its machine id, its client certificate and the CA's,
 * PEM.
 */
public record AgentCertificate(String machineId, String certificatePem, String caCertificatePem) {}
