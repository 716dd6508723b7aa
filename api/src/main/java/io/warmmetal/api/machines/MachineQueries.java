package io.warmmetal.api.machines;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlClient;
import io.warmmetal.api.db.Filter;
import io.warmmetal.api.db.Paging;
import io.warmmetal.api.http.LabelSelector;
import io.warmmetal.api.lifecycle.Machine;

/** Listing the machine inventory. */
final class MachineQueries {
  private MachineQueries() {}

  static Future<JsonObject> list(
      SqlClient db,
      String state,
      String shape,
      Boolean cordoned,
      String labelSelector,
      String cursor,
      int limit) {
    Filter f =
        new Filter()
            .whereIfPresent("state = ?", state)
            .whereIfPresent("shape = ?", shape)
            .whereIfPresent("cordoned = ?", cordoned);
    LabelSelector.apply(labelSelector, "labels", f);
    return Paging.page(
        db,
        "SELECT * FROM machines",
        "seq",
        f,
        cursor,
        limit,
        r -> MachineJson.from(Machine.from(r)));
  }
}
