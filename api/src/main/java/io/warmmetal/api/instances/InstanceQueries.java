package io.warmmetal.api.instances;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.db.Filter;
import io.warmmetal.api.db.Paging;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.LabelSelector;

/** Reads of instances. */
public final class InstanceQueries {
  private InstanceQueries() {}

  public static Future<JsonObject> get(SqlClient db, String id) {
    return db.preparedQuery(InstanceJson.SELECT + " WHERE i.id = $1").execute(Tuple.of(id))
        .map(rows -> {
          if (rows.size() == 0) {
            throw ApiError.notFound("instance", id);
          }
          return InstanceJson.from(rows.iterator().next());
        });
  }

  public static Future<JsonArray> ofLaunch(SqlClient db, String launchId) {
    return db.preparedQuery(InstanceJson.SELECT + " WHERE i.launch_id = $1 ORDER BY i.seq")
        .execute(Tuple.of(launchId))
        .map(rows -> {
          JsonArray out = new JsonArray();
          rows.forEach(r -> out.add(InstanceJson.from(r)));
          return out;
        });
  }

  public static Future<JsonObject> list(SqlClient db, String state, String shape, String machineId,
      String labelSelector, String cursor, int limit) {
    Filter f = new Filter()
        .whereIfPresent("i.state = ?", state)
        .whereIfPresent("i.shape = ?", shape)
        .whereIfPresent("i.machine_id = ?", machineId);
    LabelSelector.apply(labelSelector, "i.labels", f);
    return Paging.page(db, InstanceJson.SELECT, "i.seq", f, cursor, limit, InstanceJson::from);
  }
}
