package io.warmmetal.api.enrollment;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import io.warmmetal.api.lifecycle.EnrollmentRequest;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.machines.MachineJson;
import java.security.cert.X509Certificate;

/** Enrollment tokens on the public API (admin), and enrollment itself on the agent port. */
public final class EnrollmentRoutes {
  private EnrollmentRoutes() {}

  public static void mountAdmin(Operations ops, EnrollmentTokens tokens) {
    ops.json(
        "createEnrollmentToken",
        201,
        ctx -> {
          JsonObject body = Params.of(ctx).body();
          return tokens.create(
              body.getInteger("uses", 1),
              body.getInteger("expiresInSeconds", 3600),
              body.getJsonObject("labels", new JsonObject()),
              body.getBoolean("allowReenroll", false));
        });
    ops.json(
        "listEnrollmentTokens",
        200,
        ctx -> tokens.list().map(items -> new JsonObject().put("items", items)));
    ops.noContent("revokeEnrollmentToken", ctx -> tokens.revoke(Params.of(ctx).path("tokenId")));
  }

  public static void mountAgentPort(Operations ops, Lifecycle lifecycle) {
    ops.json(
        "enroll",
        201,
        ctx -> {
          JsonObject body = Params.of(ctx).body();
          String token =
              ctx.request().getHeader("Authorization").substring("Bearer ".length()).trim();
          return lifecycle
              .enroll(new EnrollmentRequest(token, body.getString("csr"), MachineJson.host(body)))
              .map(AgentCertificateJson::from);
        });
    ops.json(
        "renew",
        200,
        ctx -> {
          // Authenticated by the client certificate the TLS handshake verified against the CA.
          X509Certificate cert;
          String machineId;
          try {
            cert = (X509Certificate) ctx.request().connection().peerCertificates().get(0);
            machineId = CertificateAuthority.machineIdOf(cert);
          } catch (Exception none) {
            throw ApiError.of(
                ErrorCode.Unauthorized, "present the machine's client certificate to renew it");
          }
          return lifecycle
              .renew(
                  machineId,
                  cert.getSerialNumber().toString(16),
                  Params.of(ctx).body().getString("csr"))
              .map(AgentCertificateJson::from);
        });
  }
}
