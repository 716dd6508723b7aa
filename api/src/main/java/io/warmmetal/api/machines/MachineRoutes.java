package io.warmmetal.api.machines;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.auth.AuthHandler;
import io.warmmetal.api.auth.Principal;
import io.warmmetal.api.auth.Scope;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.lifecycle.Lookups;
import io.warmmetal.api.lifecycle.Registration;

/**
 * The machine inventory: list, get, register by hand, cordon, uncordon, retire, reboot, accept or
 * reject.
 */
public final class MachineRoutes {
  private MachineRoutes() {}

  public static void mount(Operations ops, Pool db, Lifecycle lifecycle) {
    ops.json(
        "listMachines",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          return MachineQueries.list(
              db,
              p.query("state"),
              p.query("shape"),
              p.queryBoolean("cordoned"),
              p.query("labelSelector"),
              p.query("cursor"),
              p.limit());
        });
    ops.json(
        "getMachine",
        200,
        ctx -> {
          String id = Params.of(ctx).path("machineId");
          return Scope.of(ctx, db)
              .compose(scope -> visible(db, scope, id))
              .compose(x -> Lookups.machine(db, id))
              .map(MachineJson::from);
        });
    ops.json(
        "registerMachine",
        201,
        ctx -> {
          JsonObject body = Params.of(ctx).body();
          return lifecycle
              .register(
                  new Registration(
                      MachineJson.host(body),
                      body.getJsonObject("labels", new JsonObject()),
                      body.getBoolean("prepared", false)))
              .map(MachineJson::from);
        });
    ops.json(
        "cordonMachine",
        200,
        ctx -> lifecycle.cordon(Params.of(ctx).path("machineId"), true).map(MachineJson::from));
    ops.json(
        "uncordonMachine",
        200,
        ctx -> lifecycle.cordon(Params.of(ctx).path("machineId"), false).map(MachineJson::from));
    ops.json(
        "retireMachine",
        200,
        ctx -> lifecycle.retire(Params.of(ctx).path("machineId")).map(MachineJson::from));
    ops.json(
        "rebootMachine",
        200,
        ctx ->
            lifecycle
                .reboot(Params.of(ctx).path("machineId"), "reboot ordered by an operator")
                .map(MachineJson::from));
    ops.json(
        "acceptMachine",
        200,
        ctx ->
            lifecycle
                .accept(Params.of(ctx).path("machineId"), operator(ctx))
                .map(MachineJson::from));
    ops.json(
        "rejectMachine",
        200,
        ctx ->
            lifecycle
                .reject(Params.of(ctx).path("machineId"), operator(ctx))
                .map(MachineJson::from));
  }

  /** Who acted, for the event: the token's name and id. */
  private static String operator(RoutingContext ctx) {
    Principal p = AuthHandler.principal(ctx);
    return p.name() + " (" + p.tokenId() + ")";
  }

  /**
   * A project sees only the machines under its own instances (a launch's caller looks up where its
   * instance landed); any other is answered as if it did not exist.
   */
  private static Future<Void> visible(Pool db, Scope scope, String machineId) {
    if (scope.project() == null) {
      return Future.succeededFuture();
    }
    return db.preparedQuery(
            "SELECT 1 FROM instances WHERE machine_id = $1 AND project = $2 AND state <> 'terminated'")
        .execute(Tuple.of(machineId, scope.project()))
        .map(
            rows -> {
              if (rows.size() == 0) {
                throw ApiError.notFound("machine", machineId);
              }
              return null;
            });
  }
}
