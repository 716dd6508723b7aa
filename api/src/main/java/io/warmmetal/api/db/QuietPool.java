package io.warmmetal.api.db;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PrepareOptions;
import io.vertx.sqlclient.PreparedQuery;
import io.vertx.sqlclient.Query;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pool, with one difference: a connection a caller holds (a transaction) reports its
 * connection's failures to the log at DEBUG. Vert.x prints a held connection's failure with {@code
 * printStackTrace} when it has no exception handler — on every PostgreSQL restart ("terminating
 * connection due to administrator command") — though the same failure also fails the statement
 * running on it, which its caller logs once per outage ({@code http/OutageLog}). {@code
 * withTransaction} and {@code withConnection} take their connections from {@link #getConnection}.
 */
final class QuietPool implements Pool {
  private static final Logger LOG = LoggerFactory.getLogger(QuietPool.class);

  private final Pool pool;

  QuietPool(Pool pool) {
    this.pool = pool;
  }

  @Override
  public Future<SqlConnection> getConnection() {
    return pool.getConnection()
        .map(
            conn ->
                conn.exceptionHandler(
                    err -> LOG.debug("A held database connection failed: {}", err.toString())));
  }

  @Override
  public Query<RowSet<Row>> query(String sql) {
    return pool.query(sql);
  }

  @Override
  public PreparedQuery<RowSet<Row>> preparedQuery(String sql) {
    return pool.preparedQuery(sql);
  }

  @Override
  public PreparedQuery<RowSet<Row>> preparedQuery(String sql, PrepareOptions options) {
    return pool.preparedQuery(sql, options);
  }

  @Override
  public int size() {
    return pool.size();
  }

  @Override
  public Future<Void> close() {
    return pool.close();
  }
}
