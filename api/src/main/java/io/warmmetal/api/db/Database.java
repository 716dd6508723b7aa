package io.warmmetal.api.db;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClientOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.util.concurrent.TimeUnit;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PostgreSQL connection pool every component shares, and the schema migrations applied at
 * start.
 */
public final class Database {
  private static final Logger LOG = LoggerFactory.getLogger(Database.class);

  private Database() {}

  /**
   * Parses a {@code postgresql://user:password@host:port/database} URL, naming the problem if it is
   * malformed.
   */
  public static PgConnectOptions connectOptions(String url) {
    try {
      return PgConnectOptions.fromUri(url.startsWith("jdbc:") ? url.substring(5) : url);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "WARMMETAL_DATABASE_URL is not a postgresql:// URL: " + e.getMessage());
    }
  }

  /**
   * A database that does not answer a connect in this long is down: requests get a 503, not a
   * minute's wait.
   */
  static final int CONNECT_TIMEOUT_MILLIS = 5_000;

  /**
   * The longest a request waits for a pooled connection before it is answered 503 (the database is
   * overloaded).
   */
  static final int POOL_WAIT_SECONDS = 10;

  /**
   * The shared pool; a connection it lends logs its failure instead of printing it ({@link
   * QuietPool}).
   */
  public static Pool pool(Vertx vertx, PgConnectOptions options, int size) {
    options.setCachePreparedStatements(true).setPipeliningLimit(256);
    return new QuietPool(
        PgBuilder.pool()
            .with(
                new NetClientOptions()
                    .setConnectTimeout(CONNECT_TIMEOUT_MILLIS)) // TLS stays the connect options'
            .with(
                new PoolOptions()
                    .setMaxSize(size)
                    .setName("warmmetal")
                    .setShared(false)
                    .setConnectionTimeout(POOL_WAIT_SECONDS)
                    .setConnectionTimeoutUnit(TimeUnit.SECONDS))
            .connectingTo(options)
            .using(vertx)
            .build());
  }

  /**
   * Applies pending migrations from {@code db/migration} on a worker thread (Flyway speaks JDBC).
   */
  public static Future<Void> migrate(Vertx vertx, PgConnectOptions options) {
    return vertx.executeBlocking(
        () -> {
          String jdbc =
              "jdbc:postgresql://"
                  + options.getHost()
                  + ":"
                  + options.getPort()
                  + "/"
                  + options.getDatabase()
                  + (options.getSslMode() == null || options.getSslMode() == SslMode.DISABLE
                      ? ""
                      : "?sslmode=" + options.getSslMode().value);
          Flyway flyway =
              Flyway.configure()
                  .dataSource(jdbc, options.getUser(), options.getPassword())
                  .locations("classpath:db/migration")
                  .load();
          int applied = flyway.migrate().migrationsExecuted;
          LOG.info(
              "Database schema at version {} ({} migrations applied now)",
              flyway.info().current().getVersion(),
              applied);
          return null;
        },
        false);
  }
}
