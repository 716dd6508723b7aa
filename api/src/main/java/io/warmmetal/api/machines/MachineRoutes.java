package io.warmmetal.api.machines;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.lifecycle.Lookups;
import io.warmmetal.api.lifecycle.Registration;

/** The machine inventory: list, get, register by hand, cordon, uncordon, retire. */
public final class MachineRoutes {
  private MachineRoutes() {}

  public static void mount(Operations ops, Pool db, Lifecycle lifecycle) {
    ops.json("listMachines", 200, ctx -> {
      Params p = Params.of(ctx);
      return MachineQueries.list(db, p.query("state"), p.query("shape"), p.queryBoolean("cordoned"),
          p.query("labelSelector"), p.query("cursor"), p.limit());
    });
    ops.json("getMachine", 200, ctx -> Lookups.machine(db, Params.of(ctx).path("machineId")).map(MachineJson::from));
    ops.json("registerMachine", 201, ctx -> {
      JsonObject body = Params.of(ctx).body();
      return lifecycle.register(new Registration(MachineJson.host(body), body.getJsonObject("labels",
          new JsonObject()), body.getBoolean("prepared", false))).map(MachineJson::from);
    });
    ops.json("cordonMachine", 200, ctx -> lifecycle.cordon(Params.of(ctx).path("machineId"), true)
        .map(MachineJson::from));
    ops.json("uncordonMachine", 200, ctx -> lifecycle.cordon(Params.of(ctx).path("machineId"), false)
        .map(MachineJson::from));
    ops.json("retireMachine", 200, ctx -> lifecycle.retire(Params.of(ctx).path("machineId")).map(MachineJson::from));
  }
}
