package io.warmmetal.api.instances;

import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.auth.AuthHandler;
import io.warmmetal.api.auth.Principal;
import io.warmmetal.api.http.Json;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import io.warmmetal.api.lifecycle.Caller;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.lifecycle.Lookups;

/** RunInstances, DescribeInstances and TerminateInstances. */
public final class InstanceRoutes {
  private InstanceRoutes() {}

  public static void mount(Operations ops, Pool db, Lifecycle lifecycle) {
    ops.handle("runInstances", ctx -> lifecycle
        .launch(LaunchRequests.parse(Params.of(ctx).body(), caller(ctx)))
        .onSuccess(launch -> Json.reply(ctx, launch.replayed() ? 200 : 201, InstanceJson.from(launch))));
    ops.json("listInstances", 200, ctx -> {
      Params p = Params.of(ctx);
      return InstanceQueries.list(db, p.query("state"), p.query("shape"), p.query("machineId"),
          p.query("labelSelector"), p.query("cursor"), p.limit());
    });
    ops.json("getInstance", 200, ctx -> Lookups.instance(db, Params.of(ctx).path("instanceId"))
        .map(InstanceJson::from));
    ops.json("terminateInstance", 200, ctx -> lifecycle
        .terminate(Params.of(ctx).path("instanceId"), caller(ctx))
        .map(InstanceJson::from));
  }

  private static Caller caller(RoutingContext ctx) {
    Principal p = AuthHandler.principal(ctx);
    return new Caller(p.tokenId(), p.name());
  }
}
