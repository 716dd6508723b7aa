package io.warmmetal.api.shapes;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.auth.Scope;
import io.warmmetal.api.http.ApiError;

/**
 * The fleet's shapes with live machine counts: by state, and by state per offering — the machines
 * grouped by the values of two labels, their zone and region (which label keys those are is the
 * caller's choice, {@link Topology}).
 */
public final class ShapeQueries {
  /**
   * Which machine labels say where a machine is: an offering's zone and region are their values.
   */
  public record Topology(String zoneLabel, String regionLabel) {
    public static final Topology DEFAULT =
        new Topology("topology.kubernetes.io/zone", "topology.kubernetes.io/region");

    /** The given label keys, each defaulting to the well-known Kubernetes one. */
    public static Topology of(String zoneLabel, String regionLabel) {
      return new Topology(
          zoneLabel == null ? DEFAULT.zoneLabel : zoneLabel,
          regionLabel == null ? DEFAULT.regionLabel : regionLabel);
    }
  }

  /**
   * One query for every shape: machines counted per (shape, zone, region, state), then summed up
   * two ways.
   */
  private static final String SELECT =
      """
      WITH by_state AS (
        SELECT shape, labels ->> $1 AS zone, labels ->> $2 AS region, state, count(*) AS n
        FROM machines GROUP BY shape, zone, region, state
      )
      SELECT s.*, coalesce(c.counts, '{}') AS counts, coalesce(c.total, 0) AS total,
             coalesce(o.offerings, '[]') AS offerings, d.disk_gib
      FROM shapes s
      LEFT JOIN (
        SELECT shape, jsonb_object_agg(state, n) AS counts, sum(n) FILTER (WHERE state <> 'retired') AS total
        FROM (SELECT shape, state, sum(n)::bigint AS n FROM by_state GROUP BY shape, state) per_state
        GROUP BY shape) c ON c.shape = s.name
      LEFT JOIN (
        SELECT shape, jsonb_agg(jsonb_build_object('zone', zone, 'region', region, 'counts', counts)
                                ORDER BY zone NULLS LAST, region NULLS LAST) AS offerings
        FROM (SELECT shape, zone, region, jsonb_object_agg(state, n) AS counts
              FROM by_state GROUP BY shape, zone, region) per_offering
        GROUP BY shape) o ON o.shape = s.name
      LEFT JOIN (
        SELECT shape, min(disk) AS disk_gib
        FROM (SELECT shape, (SELECT sum((d ->> 'sizeGiB')::bigint) FROM jsonb_array_elements(
                               CASE WHEN jsonb_typeof(facts -> 'disks') = 'array' THEN facts -> 'disks'
                                    ELSE '[]'::jsonb END) d) AS disk
              FROM machines WHERE state <> 'retired') per_machine
        GROUP BY shape) d ON d.shape = s.name
      """;

  private ShapeQueries() {}

  public static Future<JsonArray> list(SqlClient db, Topology topology) {
    return db.preparedQuery(SELECT + " ORDER BY s.name")
        .execute(Tuple.of(topology.zoneLabel(), topology.regionLabel()))
        .map(
            rows -> {
              JsonArray out = new JsonArray();
              rows.forEach(r -> out.add(toJson(r)));
              return out;
            });
  }

  /** Every shape the scope may see: a project's quota may close some to its own tokens. */
  public static Future<JsonArray> visible(SqlClient db, Scope scope, Topology topology) {
    return list(db, topology).compose(items -> ProjectQuotas.apply(db, scope, items));
  }

  /** A shape by name or alias; 404 if neither matches. */
  public static Future<JsonObject> get(SqlClient db, String nameOrAlias, Topology topology) {
    return db.preparedQuery(SELECT + " WHERE s.name = $3 OR s.alias = $3 ORDER BY s.alias = $3")
        .execute(Tuple.of(topology.zoneLabel(), topology.regionLabel(), nameOrAlias))
        .map(
            rows -> {
              if (rows.size() == 0) {
                throw ApiError.notFound("shape", nameOrAlias);
              }
              return toJson(rows.iterator().next());
            });
  }

  /** The shape's name for a name or an alias; 404 if neither matches. */
  public static Future<String> resolve(SqlClient db, String nameOrAlias) {
    return db.preparedQuery(
            "SELECT name FROM shapes WHERE name = $1 OR alias = $1 ORDER BY alias = $1")
        .execute(Tuple.of(nameOrAlias))
        .map(
            rows -> {
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
        .put("total", r.getNumeric("total").longValue())
        .put(
            "diskGiB", r.getValue("disk_gib") == null ? null : r.getNumeric("disk_gib").longValue())
        .put("offerings", r.getJsonArray("offerings"));
  }
}
