package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Future;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import java.util.function.Function;

/**
 * Runs a transaction, retrying it when PostgreSQL aborts it for a deadlock or a serialization
 * conflict.
 */
final class Tx {
  private static final int ATTEMPTS = 3;

  private Tx() {}

  static <T> Future<T> run(Pool db, Function<SqlConnection, Future<T>> work) {
    return attempt(db, work, 1);
  }

  private static <T> Future<T> attempt(Pool db, Function<SqlConnection, Future<T>> work, int n) {
    return db.withTransaction(work)
        .recover(
            err -> {
              if (n < ATTEMPTS
                  && err instanceof PgException pg
                  && ("40001".equals(pg.getSqlState()) || "40P01".equals(pg.getSqlState()))) {
                return attempt(db, work, n + 1);
              }
              return Future.failedFuture(err);
            });
  }
}
