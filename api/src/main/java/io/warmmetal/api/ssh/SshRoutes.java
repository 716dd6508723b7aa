package io.warmmetal.api.ssh;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;

/** SSH keys, enrolling servers over SSH, and recovering machines over SSH. */
public final class SshRoutes {
  private SshRoutes() {}

  public static void mount(
      Operations ops, SshKeys keys, SshEnrollments enrollments, Recovery recovery) {
    ops.json(
        "createSshKey",
        201,
        ctx -> {
          JsonObject body = Params.of(ctx).body();
          return keys.create(body.getString("name"), body.getString("privateKey"));
        });
    ops.json(
        "listSshKeys", 200, ctx -> keys.list().map(items -> new JsonObject().put("items", items)));
    ops.json("getSshKey", 200, ctx -> keys.get(Params.of(ctx).path("keyId")));
    ops.noContent("deleteSshKey", ctx -> keys.delete(Params.of(ctx).path("keyId")));
    ops.json("enrollMachineOverSsh", 202, ctx -> enrollments.start(Params.of(ctx).body()));
    ops.json(
        "listSshEnrollments",
        200,
        ctx -> enrollments.list().map(items -> new JsonObject().put("items", items)));
    ops.json("getSshEnrollment", 200, ctx -> enrollments.get(Params.of(ctx).path("enrollmentId")));
    ops.json(
        "recoverMachine",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          return recovery.recover(
              p.path("machineId"), p.body().getString("action", "restart-agent"));
        });
  }
}
