package io.warmmetal.api.shapes;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.http.ApiError;

/** The fleet's shapes with live machine counts. */
public final class ShapeQueries {
  private static final String SELECT = """
      SELECT s.*, coalesce(jsonb_object_agg(c.state, c.n) FILTER (WHERE c.state IS NOT NULL), '{}') AS counts,
             coalesce(sum(c.n) FILTER (WHERE c.state <> 'retired'), 0) AS total
      FROM shapes s
      LEFT JOIN (SELECT shape, state, count(*) AS n FROM machines GROUP BY shape, state) c ON c.shape = s.name
      """;

  private ShapeQueries() {}

  public static Future<JsonArray> list(SqlClient db) {
    return db.query(SELECT + " GROUP BY s.name ORDER BY s.name").execute().map(rows -> {
      JsonArray out = new JsonArray();
      rows.forEach(r -> out.add(toJson(r)));
      return out;
    });
  }

  /** A shape by name or alias; 404 if neither matches. */
  public static Future<JsonObject> get(SqlClient db, String nameOrAlias) {
    return db.preparedQuery(SELECT + " WHERE s.name = $1 OR s.alias = $1 GROUP BY s.name ORDER BY s.alias = $1")
        .execute(Tuple.of(nameOrAlias))
        .map(rows -> {
          if (rows.size() == 0) {
            throw ApiError.notFound("shape", nameOrAlias);
          }
          return toJson(rows.iterator().next());
        });
  }

  /** The shape's name for a name or an alias; 404 if neither matches. */
  public static Future<String> resolve(SqlClient db, String nameOrAlias) {
    return db.preparedQuery("SELECT name FROM shapes WHERE name = $1 OR alias = $1 ORDER BY alias = $1")
        .execute(Tuple.of(nameOrAlias))
        .map(rows -> {
          if (rows.size() == 0) {
            throw ApiError.notFound("shape", nameOrAlias);
          }
          return rows.iterator().next().getString("name");
        });
  }

  private static JsonObject toJson(Row r) {
    Object price = r.getValue("price_per_hour");
    return new JsonObject()
        .put("name", r.getString("name"))
        .put("alias", r.getString("alias"))
        .put("pricePerHour", price == null ? null : r.getNumeric("price_per_hour").doubleValue())
        .put("arch", r.getString("arch"))
        .put("cpus", r.getInteger("cpus"))
        .put("memoryGiB", r.getInteger("memory_gib"))
        .put("gpus", r.getJsonArray("gpus"))
        .put("counts", r.getJsonObject("counts"))
        .put("total", r.getNumeric("total").longValue());
  }
}
