package io.warmmetal.api.pools;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.boot.BootImages;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import io.warmmetal.api.shapes.ShapeQueries;

/** Warm-pool targets per shape, and the node image each pool's machines should run. */
public final class PoolRoutes {
  private PoolRoutes() {}

  /** A pool may name only an image the API can boot: one installed in the boot directory. */
  private static Future<Void> knownImage(BootImages images, String version) {
    if (version == null) {
      return Future.succeededFuture();
    }
    return images
        .catalog()
        .map(
            catalog -> {
              if (catalog.get(version).isEmpty()) {
                throw ApiError.invalid(
                    "image",
                    "no node image "
                        + version
                        + " in "
                        + images.dir()
                        + " (installed: "
                        + catalog.images().stream().map(BootImages.Image::version).toList()
                        + ")");
              }
              return null;
            });
  }

  public static void mount(Operations ops, Pool db, PoolManager manager, BootImages images) {
    ops.json(
        "listPools",
        200,
        ctx -> PoolQueries.list(db).map(items -> new JsonObject().put("items", items)));
    ops.json(
        "getPool",
        200,
        ctx ->
            ShapeQueries.resolve(db, Params.of(ctx).path("shape"))
                .compose(shape -> PoolQueries.get(db, shape)));
    ops.json(
        "putPool",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          JsonObject target = p.body();
          int min = target.getInteger("minWarm");
          int max = target.getInteger("maxWarm");
          if (max < min) {
            throw ApiError.invalid(
                "maxWarm", "maxWarm (" + max + ") must not be below minWarm (" + min + ")");
          }
          String image = target.getString("image");
          return knownImage(images, image)
              .compose(x -> ShapeQueries.resolve(db, p.path("shape")))
              .compose(
                  shape ->
                      db.withTransaction(
                              tx ->
                                  tx.preparedQuery(
                                          """
                      INSERT INTO pools (shape, min_warm, max_warm, image) VALUES ($1, $2, $3, $4)
                      ON CONFLICT (shape) DO UPDATE SET min_warm = $2, max_warm = $3, image = $4, updated_at = now()""")
                                      .execute(Tuple.of(shape, min, max, image))
                                      .compose(
                                          x ->
                                              tx.preparedQuery(
                                                      """
                          INSERT INTO events (type, subject, reason, details)
                          VALUES ('PoolTarget', $1, 'target set', $2)""")
                                                  .execute(Tuple.of(shape, target))))
                          .compose(
                              x -> {
                                manager.nudge();
                                return PoolQueries.get(db, shape);
                              }));
        });
    ops.noContent(
        "deletePool",
        ctx ->
            ShapeQueries.resolve(db, Params.of(ctx).path("shape"))
                .compose(
                    shape ->
                        db.preparedQuery("DELETE FROM pools WHERE shape = $1")
                            .execute(Tuple.of(shape)))
                // Deleting the pool of an unknown shape is as done as deleting it twice.
                .recover(
                    err ->
                        err instanceof ApiError
                            ? Future.succeededFuture()
                            : Future.failedFuture(err)));
  }
}
