package io.warmmetal.api.enrollment;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import io.warmmetal.api.lifecycle.EnrollmentRequest;
import io.warmmetal.api.lifecycle.Lifecycle;

/** Enrollment tokens on the public API (admin), and enrollment itself on the agent port. */
public final class EnrollmentRoutes {
  private EnrollmentRoutes() {}

  public static void mountAdmin(Operations ops, EnrollmentTokens tokens) {
    ops.json("createEnrollmentToken", 201, ctx -> {
      JsonObject body = Params.of(ctx).body();
      return tokens.create(body.getInteger("uses", 1), body.getInteger("expiresInSeconds", 3600),
          body.getJsonObject("labels", new JsonObject()), body.getBoolean("allowReenroll", false));
    });
    ops.json("listEnrollmentTokens", 200, ctx -> tokens.list().map(items -> new JsonObject().put("items", items)));
    ops.noContent("revokeEnrollmentToken", ctx -> tokens.revoke(Params.of(ctx).path("tokenId")));
  }

  public static void mountAgentPort(Operations ops, Lifecycle lifecycle) {
    ops.json("enroll", 201, ctx -> {
      JsonObject body = Params.of(ctx).body();
      String token = ctx.request().getHeader("Authorization").substring("Bearer ".length()).trim();
      JsonObject machine = body.copy();
      machine.remove("csr");
      return lifecycle.enroll(new EnrollmentRequest(token, body.getString("csr"), machine));
    });
  }
}
