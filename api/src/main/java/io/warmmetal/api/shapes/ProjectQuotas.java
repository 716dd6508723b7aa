package io.warmmetal.api.shapes;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.auth.Scope;
import java.util.HashMap;
import java.util.Map;

/**
 * What a project may launch, shown on its shapes: each shape it has a quota for carries {@code
 * quota} (the most live instances, and how many it has), and a shape its quota closes (0) does not
 * exist for the project's own tokens — as a launch naming it is answered (no such shape). An
 * operator sees it, with its quota.
 */
final class ProjectQuotas {
  private ProjectQuotas() {}

  /** {@code shapes} as the request's scope sees them; across every project: unchanged. */
  static Future<JsonArray> apply(SqlClient db, Scope scope, JsonArray shapes) {
    String project = scope.project();
    if (project == null) {
      return Future.succeededFuture(shapes);
    }
    return db.preparedQuery(
            "SELECT shape, max_instances, in_use FROM project_quota_use WHERE project = $1")
        .execute(Tuple.of(project))
        .map(
            rows -> {
              Map<String, JsonObject> quotas = new HashMap<>();
              rows.forEach(
                  r ->
                      quotas.put(
                          r.getString("shape"),
                          new JsonObject()
                              .put("maxInstances", r.getInteger("max_instances"))
                              .put("inUse", r.getLong("in_use"))));
              JsonArray visible = new JsonArray();
              for (Object o : shapes) {
                JsonObject shape = (JsonObject) o;
                JsonObject quota = quotas.get(shape.getString("name"));
                if (quota == null) {
                  visible.add(shape);
                } else if (quota.getInteger("maxInstances") > 0 || scope.operator()) {
                  visible.add(shape.copy().put("quota", quota));
                }
              }
              return visible;
            });
  }
}
