package io.warmmetal.api.machines;

import io.vertx.sqlclient.Pool;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import io.warmmetal.api.lifecycle.Lifecycle;

/** The machine inventory: list, get, register by hand, cordon, uncordon, retire. */
public final class MachineRoutes {
  private MachineRoutes() {}

  public static void mount(Operations ops, Pool db, Lifecycle lifecycle) {
    ops.json("listMachines", 200, ctx -> {
      Params p = Params.of(ctx);
      return MachineQueries.list(db, p.query("state"), p.query("shape"), p.queryBoolean("cordoned"),
          p.query("labelSelector"), p.query("cursor"), p.limit());
    });
    ops.json("getMachine", 200, ctx -> MachineQueries.get(db, Params.of(ctx).path("machineId")));
    ops.json("registerMachine", 201, ctx -> lifecycle.register(Params.of(ctx).body()));
    ops.json("cordonMachine", 200, ctx -> lifecycle.cordon(Params.of(ctx).path("machineId"), true));
    ops.json("uncordonMachine", 200, ctx -> lifecycle.cordon(Params.of(ctx).path("machineId"), false));
    ops.json("retireMachine", 200, ctx -> lifecycle.retire(Params.of(ctx).path("machineId")));
  }
}
