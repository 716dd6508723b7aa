package io.warmmetal.api.pools;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.http.ApiError;

/** Pool targets beside live counts. */
public final class PoolQueries {
  private static final String SELECT =
      """
      SELECT p.shape, p.min_warm, p.max_warm, p.deficit, p.image,
        count(m.id) FILTER (WHERE m.state = 'rebooting') AS rebooting,
        count(m.id) FILTER (WHERE p.image IS NOT NULL AND m.state <> 'retired'
          AND (m.facts -> 'image' ->> 'version') IS DISTINCT FROM p.image) AS on_other_image,
        count(m.id) FILTER (WHERE m.state = 'warm' AND NOT m.cordoned AND m.instance_id IS NULL) AS warm,
        count(m.id) FILTER (WHERE m.state = 'preparing' AND m.instance_id IS NULL) AS preparing,
        count(m.id) FILTER (WHERE m.state = 'standby') AS standby,
        count(m.id) FILTER (WHERE m.state = 'pre-joined') AS pre_joined,
        -- A standby instance's machine is pre-joined, not in use (nor when out of contact).
        count(m.id) FILTER (WHERE (m.instance_id IS NOT NULL OR m.state IN ('joining', 'in-use', 'resetting'))
          AND m.state <> 'pre-joined' AND (m.state <> 'offline' OR m.offline_from IS DISTINCT FROM 'pre-joined'))
          AS in_use
      FROM pools p LEFT JOIN machines m ON m.shape = p.shape
      """;

  private PoolQueries() {}

  public static Future<JsonArray> list(SqlClient db) {
    return db.query(SELECT + " GROUP BY p.shape ORDER BY p.shape")
        .execute()
        .map(
            rows -> {
              JsonArray out = new JsonArray();
              rows.forEach(r -> out.add(toJson(r)));
              return out;
            });
  }

  public static Future<JsonObject> get(SqlClient db, String shape) {
    return db.preparedQuery(SELECT + " WHERE p.shape = $1 GROUP BY p.shape")
        .execute(Tuple.of(shape))
        .map(
            rows -> {
              if (rows.size() == 0) {
                throw ApiError.notFound("pool", shape);
              }
              return toJson(rows.iterator().next());
            });
  }

  private static JsonObject toJson(Row r) {
    JsonObject json =
        new JsonObject()
            .put("shape", r.getString("shape"))
            .put("minWarm", r.getInteger("min_warm"))
            .put("maxWarm", r.getInteger("max_warm"))
            .put("warm", r.getLong("warm"))
            .put("preparing", r.getLong("preparing"))
            .put("standby", r.getLong("standby"))
            .put("inUse", r.getLong("in_use"))
            .put("preJoined", r.getLong("pre_joined"))
            .put("deficit", r.getInteger("deficit"))
            .put("rebooting", r.getLong("rebooting"));
    if (r.getString("image") != null) {
      json.put("image", r.getString("image")).put("onOtherImage", r.getLong("on_other_image"));
    }
    return json;
  }
}
