package io.warmmetal.api.shapes;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.HashMap;
import java.util.Map;

/**
 * What a project may launch, shown on its shapes: each shape it has a quota for carries {@code quota} (the most live
 * instances, and how many it has), and a shape its quota closes (0) is not its to see.
 */
final class ProjectQuotas {
  private ProjectQuotas() {}

  /** {@code shapes} as {@code project} sees them; null: as the operator does (unchanged). */
  static Future<JsonArray> apply(SqlClient db, String project, JsonArray shapes) {
    if (project == null) {
      return Future.succeededFuture(shapes);
    }
    return db.preparedQuery("SELECT shape, max_instances, in_use FROM project_quota_use WHERE project = $1")
        .execute(Tuple.of(project))
        .map(rows -> {
          Map<String, JsonObject> quotas = new HashMap<>();
          rows.forEach(r -> quotas.put(r.getString("shape"), new JsonObject()
              .put("maxInstances", r.getInteger("max_instances")).put("inUse", r.getLong("in_use"))));
          JsonArray visible = new JsonArray();
          for (Object o : shapes) {
            JsonObject shape = (JsonObject) o;
            JsonObject quota = quotas.get(shape.getString("name"));
            if (quota == null) {
              visible.add(shape);
            } else if (quota.getInteger("maxInstances") > 0) {
              visible.add(shape.copy().put("quota", quota));
            }
          }
          return visible;
        });
  }
}
