package io.warmmetal.api.commands;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.db.Filter;
import io.warmmetal.api.db.Paging;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import io.warmmetal.api.lifecycle.Command;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.lifecycle.Lookups;

/** A machine's command queue, and results reported for machines without an agent. */
public final class CommandRoutes {
  private CommandRoutes() {}

  public static void mount(Operations ops, Pool db, Lifecycle lifecycle) {
    ops.json(
        "listMachineCommands",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          String machineId = p.path("machineId");
          return Lookups.machine(db, machineId)
              .compose(
                  m ->
                      Paging.page(
                          db,
                          "SELECT * FROM commands",
                          "seq",
                          new Filter().where("machine_id = ?", machineId),
                          p.query("cursor"),
                          p.limit(),
                          r -> CommandJson.from(Command.from(r))));
        });
    ops.json(
        "reportCommandResult",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          JsonObject body = p.body();
          return lifecycle
              .reportCommandResult(
                  p.path("commandId"),
                  "succeeded".equals(body.getString("status")),
                  body.getString("message"))
              .map(CommandJson::from);
        });
  }
}
