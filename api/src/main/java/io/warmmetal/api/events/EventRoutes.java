package io.warmmetal.api.events;

import io.vertx.sqlclient.Pool;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;

/** {@code GET /v1/events}. */
public final class EventRoutes {
  private EventRoutes() {}

  public static void mount(Operations ops, Pool db) {
    ops.json("listEvents", 200, ctx -> {
      Params p = Params.of(ctx);
      return EventLog.since(db, p.query("since"), p.query("machineId"), p.query("instanceId"), p.limit());
    });
  }
}
