package io.warmmetal.api.shapes;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.auth.Scope;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import io.warmmetal.api.shapes.ShapeQueries.Topology;

/**
 * Shapes: list and get with counts (by state and by offering) and, for a project, its quotas; set
 * an alias and a price.
 */
public final class ShapeRoutes {
  private ShapeRoutes() {}

  public static void mount(Operations ops, Pool db) {
    ops.json(
        "listShapes",
        200,
        ctx ->
            Scope.of(ctx, db)
                .compose(scope -> ShapeQueries.visible(db, scope, topology(Params.of(ctx))))
                .map(items -> new JsonObject().put("items", items)));
    ops.json(
        "getShape",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          String name = p.path("shape");
          return Scope.of(ctx, db)
              .compose(
                  scope ->
                      ShapeQueries.get(db, name, topology(p))
                          .compose(
                              shape -> ProjectQuotas.apply(db, scope, new JsonArray().add(shape)))
                          .map(
                              visible -> {
                                if (visible.isEmpty()) {
                                  throw ApiError.notFound(
                                      "shape", name); // closed to this project by its quota
                                }
                                return visible.getJsonObject(0);
                              }));
        });
    ops.json(
        "updateShape",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          return ShapeQueries.resolve(db, p.path("shape"))
              .compose(name -> update(db, name, p.body()));
        });
  }

  /**
   * The offerings' label keys the request names (the contract has checked them), else the
   * well-known ones.
   */
  private static Topology topology(Params p) {
    return Topology.of(p.query("zoneLabel"), p.query("regionLabel"));
  }

  /** Applies the fields present in the body (null clears); an alias must not name another shape. */
  private static Future<JsonObject> update(Pool db, String name, JsonObject body) {
    String alias = body.getString("alias");
    boolean setAlias = body.containsKey("alias");
    boolean setPrice = body.containsKey("pricePerHour");
    return db.withTransaction(
            tx ->
                tx.preparedQuery("SELECT 1 FROM shapes WHERE name = $1 AND name <> $2")
                    .execute(Tuple.of(alias == null ? "" : alias, name))
                    .compose(
                        clash -> {
                          if (clash.size() > 0) {
                            throw new ApiError(
                                ErrorCode.Conflict,
                                "alias '" + alias + "' is the name of another shape",
                                "alias",
                                null);
                          }
                          return tx.preparedQuery(
                                  """
                  UPDATE shapes SET alias = CASE WHEN $2 THEN $3 ELSE alias END,
                                    price_per_hour = CASE WHEN $4 THEN $5::numeric ELSE price_per_hour END
                  WHERE name = $1""")
                              .execute(
                                  Tuple.of(
                                      name,
                                      setAlias,
                                      alias,
                                      setPrice,
                                      body.getValue("pricePerHour")));
                        })
                    .compose(x -> ShapeQueries.get(tx, name, Topology.DEFAULT)))
        .recover(
            err ->
                Future.failedFuture(
                    err instanceof PgException pg && "23505".equals(pg.getSqlState())
                        ? new ApiError(
                            ErrorCode.Conflict,
                            "alias '" + alias + "' is taken by another shape",
                            "alias",
                            null)
                        : err));
  }
}
