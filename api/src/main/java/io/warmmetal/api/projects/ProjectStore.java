package io.warmmetal.api.projects;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Projects and their quotas (live instances per shape), with what each project has in use. */
final class ProjectStore {
  private static final String SELECT =
      """
      SELECT p.name, p.created_at,
             coalesce((SELECT jsonb_object_agg(q.shape, jsonb_build_object('maxInstances', q.max_instances,
                         'inUse', q.in_use))
                       FROM project_quota_use q WHERE q.project = p.name), '{}') AS quotas
      FROM projects p""";

  private final Pool db;

  ProjectStore(Pool db) {
    this.db = db;
  }

  Future<List<JsonObject>> list() {
    return db.query(SELECT + " ORDER BY p.name").execute().map(ProjectStore::toJson);
  }

  Future<JsonObject> get(String name) {
    return db.preparedQuery(SELECT + " WHERE p.name = $1")
        .execute(Tuple.of(name))
        .map(
            rows -> {
              if (rows.size() == 0) {
                throw ApiError.notFound("project", name);
              }
              return toJson(rows).get(0);
            });
  }

  /**
   * Creates the project or replaces its quotas, all or nothing. A quota below what is in use is
   * kept (nothing is terminated): new launches wait until the project is back under it.
   */
  Future<JsonObject> put(String name, Map<String, Integer> quotas) {
    List<String> shapes = new ArrayList<>(quotas.keySet());
    return db.withTransaction(
            tx ->
                tx.preparedQuery(
                        "SELECT coalesce(array_agg(s) FILTER (WHERE NOT EXISTS (SELECT 1 FROM shapes WHERE name = s)), '{}')"
                            + " AS unknown FROM unnest($1::text[]) AS s")
                    .execute(Tuple.of(shapes.toArray(String[]::new)))
                    .compose(
                        rows -> {
                          String[] unknown = rows.iterator().next().getArrayOfStrings("unknown");
                          if (unknown.length > 0) {
                            throw ApiError.invalid(
                                "quotas",
                                "no such shape: "
                                    + String.join(", ", unknown)
                                    + " (GET /v1/shapes lists them)");
                          }
                          return tx.preparedQuery(
                                  "INSERT INTO projects (name) VALUES ($1) ON CONFLICT (name) DO NOTHING")
                              .execute(Tuple.of(name));
                        })
                    .compose(
                        x ->
                            tx.preparedQuery("DELETE FROM project_quotas WHERE project = $1")
                                .execute(Tuple.of(name)))
                    .compose(
                        x ->
                            tx.preparedQuery(
                                    """
                    INSERT INTO project_quotas (project, shape, max_instances)
                    SELECT $1, s, m FROM unnest($2::text[], $3::int[]) AS q(s, m)""")
                                .execute(
                                    Tuple.of(
                                        name,
                                        shapes.toArray(String[]::new),
                                        shapes.stream().map(quotas::get).toArray(Integer[]::new)))))
        .compose(x -> get(name));
  }

  private static List<JsonObject> toJson(RowSet<Row> rows) {
    List<JsonObject> out = new ArrayList<>();
    for (Row r : rows) {
      out.add(
          new JsonObject()
              .put("name", r.getString("name"))
              .put("createdAt", Json.time(r.getOffsetDateTime("created_at")))
              .put("quotas", sorted((JsonObject) r.getValue("quotas"))));
    }
    return out;
  }

  private static JsonObject sorted(JsonObject quotas) {
    Map<String, Object> byShape = new LinkedHashMap<>();
    quotas.fieldNames().stream()
        .sorted()
        .forEach(shape -> byShape.put(shape, quotas.getValue(shape)));
    return new JsonObject(byShape);
  }
}
