package io.warmmetal.api.instances;

import io.vertx.sqlclient.Pool;
import io.warmmetal.api.auth.AuthHandler;
import io.warmmetal.api.http.Json;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.pools.PoolManager;

/** RunInstances, DescribeInstances and TerminateInstances. */
public final class InstanceRoutes {
  private InstanceRoutes() {}

  public static void mount(Operations ops, Pool db, Lifecycle lifecycle, PoolManager pools) {
    ops.handle("runInstances", ctx -> lifecycle
        .launch(LaunchRequests.parse(Params.of(ctx).body(), AuthHandler.principal(ctx)))
        .onSuccess(result -> {
          if (!result.replayed()) {
            pools.nudge();
          }
          Json.reply(ctx, result.replayed() ? 200 : 201, result.launch());
        }));
    ops.json("listInstances", 200, ctx -> {
      Params p = Params.of(ctx);
      return InstanceQueries.list(db, p.query("state"), p.query("shape"), p.query("machineId"),
          p.query("labelSelector"), p.query("cursor"), p.limit());
    });
    ops.json("getInstance", 200, ctx -> InstanceQueries.get(db, Params.of(ctx).path("instanceId")));
    ops.json("terminateInstance", 200, ctx -> lifecycle
        .terminate(Params.of(ctx).path("instanceId"), AuthHandler.principal(ctx))
        .onSuccess(x -> pools.nudge()));
  }
}
