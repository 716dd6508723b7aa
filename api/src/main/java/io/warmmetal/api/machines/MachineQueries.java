package io.warmmetal.api.machines;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.db.Filter;
import io.warmmetal.api.db.Paging;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.LabelSelector;

/** Reads of the machine inventory. */
public final class MachineQueries {
  private MachineQueries() {}

  public static Future<JsonObject> get(SqlClient db, String id) {
    return db.preparedQuery("SELECT * FROM machines WHERE id = $1").execute(Tuple.of(id))
        .map(rows -> {
          if (rows.size() == 0) {
            throw ApiError.notFound("machine", id);
          }
          return MachineJson.from(rows.iterator().next());
        });
  }

  public static Future<JsonObject> list(SqlClient db, String state, String shape, Boolean cordoned,
      String labelSelector, String cursor, int limit) {
    Filter f = new Filter()
        .whereIfPresent("state = ?", state)
        .whereIfPresent("shape = ?", shape)
        .whereIfPresent("cordoned = ?", cordoned);
    LabelSelector.apply(labelSelector, "labels", f);
    return Paging.page(db, "SELECT * FROM machines", "seq", f, cursor, limit, MachineJson::from);
  }
}
