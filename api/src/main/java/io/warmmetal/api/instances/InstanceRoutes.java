package io.warmmetal.api.instances;

import io.vertx.sqlclient.Pool;
import io.warmmetal.api.auth.Scope;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.Json;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.lifecycle.Lookups;

/** RunInstances, DescribeInstances and TerminateInstances. */
public final class InstanceRoutes {
  private InstanceRoutes() {}

  public static void mount(Operations ops, Pool db, Lifecycle lifecycle) {
    ops.handle(
        "runInstances",
        ctx ->
            Scope.of(ctx, db)
                .compose(
                    scope ->
                        lifecycle.launch(
                            LaunchRequests.parse(Params.of(ctx).body(), Scope.creator(ctx, scope))))
                .onSuccess(
                    launch ->
                        Json.reply(ctx, launch.replayed() ? 200 : 201, InstanceJson.from(launch))));
    ops.json(
        "listInstances",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          return Scope.of(ctx, db)
              .compose(
                  scope ->
                      InstanceQueries.list(
                          db,
                          scope.project(),
                          p.query("state"),
                          p.query("shape"),
                          p.query("machineId"),
                          p.queryBoolean("standby"),
                          p.query("labelSelector"),
                          p.query("cursor"),
                          p.limit()));
        });
    ops.json(
        "getInstance",
        200,
        ctx -> {
          String id = Params.of(ctx).path("instanceId");
          return Scope.of(ctx, db)
              .compose(
                  scope ->
                      Lookups.instance(db, id)
                          .map(
                              instance -> {
                                if (!Scope.caller(ctx, scope).reaches(instance.project())) {
                                  throw ApiError.notFound(
                                      "instance", id); // another project's: as if it did not exist
                                }
                                return InstanceJson.from(instance);
                              }));
        });
    ops.json(
        "terminateInstance",
        200,
        ctx ->
            Scope.of(ctx, db)
                .compose(
                    scope ->
                        lifecycle.terminate(
                            Params.of(ctx).path("instanceId"), Scope.caller(ctx, scope)))
                .map(InstanceJson::from));
  }
}
