package io.warmmetal.api.events;

import io.vertx.sqlclient.Pool;
import io.warmmetal.api.auth.Scope;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;

/**
 * {@code GET /v1/events}: a project sees the events of its own instances; operators see every
 * event.
 */
public final class EventRoutes {
  private EventRoutes() {}

  public static void mount(Operations ops, Pool db) {
    ops.json(
        "listEvents",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          return Scope.of(ctx, db)
              .compose(
                  scope ->
                      EventLog.since(
                          db,
                          scope.project(),
                          p.query("since"),
                          p.query("machineId"),
                          p.query("instanceId"),
                          p.limit()));
        });
  }
}
