package io.warmmetal.api.projects;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.auth.Scope;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Projects: an operator creates them and sets their quotas; a project's tokens can read their own.
 */
public final class ProjectRoutes {
  private ProjectRoutes() {}

  public static void mount(Operations ops, Pool db) {
    ProjectStore projects = new ProjectStore(db);
    ops.json(
        "listProjects",
        200,
        ctx -> projects.list().map(list -> new JsonObject().put("items", new JsonArray(list))));
    ops.json(
        "getProject",
        200,
        ctx -> {
          String name = Params.of(ctx).path("project");
          return Scope.of(ctx, db)
              .compose(
                  scope -> {
                    if (scope.project() != null && !scope.project().equals(name)) {
                      throw ApiError.notFound(
                          "project", name); // another project's: as if it did not exist
                    }
                    return projects
                        .get(name)
                        .map(project -> scope.operator() ? project : withoutClosedShapes(project));
                  });
        });
    ops.json(
        "putProject",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          JsonObject body = p.body();
          JsonObject given = body.getJsonObject("quotas", new JsonObject());
          Map<String, Integer> quotas = new LinkedHashMap<>();
          given
              .fieldNames()
              .forEach(
                  shape ->
                      quotas.put(shape, given.getJsonObject(shape).getInteger("maxInstances")));
          return projects.put(p.path("project"), quotas);
        });
  }

  /**
   * A project's own tokens do not see its quotas of 0: the shapes they close do not exist for it
   * (GET /v1/shapes leaves them out, a launch naming one is told there is no such shape).
   */
  private static JsonObject withoutClosedShapes(JsonObject project) {
    JsonObject quotas = project.getJsonObject("quotas");
    quotas
        .fieldNames()
        .removeIf(shape -> quotas.getJsonObject(shape).getInteger("maxInstances") == 0);
    return project;
  }
}
