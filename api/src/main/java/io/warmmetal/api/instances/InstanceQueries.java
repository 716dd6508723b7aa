package io.warmmetal.api.instances;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlClient;
import io.warmmetal.api.db.Filter;
import io.warmmetal.api.db.Paging;
import io.warmmetal.api.http.LabelSelector;
import io.warmmetal.api.lifecycle.Instance;

/** Listing instances. */
final class InstanceQueries {
  private InstanceQueries() {}

  /** {@code project} null: every project's. */
  static Future<JsonObject> list(
      SqlClient db,
      String project,
      String state,
      String shape,
      String machineId,
      Boolean standby,
      String labelSelector,
      String cursor,
      int limit) {
    Filter f =
        new Filter()
            .whereIfPresent("i.project = ?", project)
            .whereIfPresent("i.state = ?", state)
            .whereIfPresent("i.shape = ?", shape)
            .whereIfPresent("i.machine_id = ?", machineId)
            .whereIfPresent("i.standby = ?", standby);
    LabelSelector.apply(labelSelector, "i.labels", f);
    return Paging.page(
        db, Instance.SELECT, "i.seq", f, cursor, limit, r -> InstanceJson.from(Instance.from(r)));
  }
}
