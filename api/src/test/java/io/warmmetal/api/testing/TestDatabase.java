package io.warmmetal.api.testing;

import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.warmmetal.api.db.Database;
import io.warmmetal.api.db.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.concurrent.atomic.AtomicInteger;
import org.flywaydb.core.Flyway;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The real PostgreSQL the tests run against, one per test JVM, with a fresh database per fixture:
 *
 * <ul>
 *   <li>{@code WARMMETAL_TEST_DATABASE_URL} (a {@code postgresql://} URL with rights to create
 *       databases): that server;
 *   <li>{@code WARMMETAL_TEST_TESTCONTAINERS=true} where a Docker daemon answers: a {@code
 *       postgres:17} container;
 *   <li>otherwise the embedded PostgreSQL the product itself ships.
 * </ul>
 */
public final class TestDatabase {
  private static final AtomicInteger COUNTER = new AtomicInteger();
  private static String serverUrl;

  private TestDatabase() {}

  /** A {@code postgresql://} URL of a new, empty database. */
  /**
   * A fresh database reached through {@code proxy}, which a test cuts and restores: {@code url}.
   */
  public record Proxied(TcpProxy proxy, String url) {}

  /** A fresh database behind a proxy on loopback: an outage a test can make. */
  public static Proxied freshDatabaseBehindProxy(Vertx vertx) throws Exception {
    PgConnectOptions db = Database.connectOptions(freshDatabaseUrl());
    TcpProxy proxy = TcpProxy.start(vertx, db.getHost(), db.getPort());
    return new Proxied(
        proxy,
        "postgresql://"
            + db.getUser()
            + ":"
            + db.getPassword()
            + "@127.0.0.1:"
            + proxy.port()
            + "/"
            + db.getDatabase());
  }

  public static synchronized String freshDatabaseUrl() throws Exception {
    if (serverUrl == null) {
      serverUrl = startServer();
    }
    String name = "wmtest_" + ProcessHandle.current().pid() + "_" + COUNTER.incrementAndGet();
    var options = Database.connectOptions(serverUrl);
    String jdbcBase = "jdbc:postgresql://" + options.getHost() + ":" + options.getPort() + "/";
    try (Connection c =
        DriverManager.getConnection(
            jdbcBase + options.getDatabase(), options.getUser(), options.getPassword())) {
      c.createStatement().execute("CREATE DATABASE " + name);
    }
    return "postgresql://"
        + options.getUser()
        + ":"
        + options.getPassword()
        + "@"
        + options.getHost()
        + ":"
        + options.getPort()
        + "/"
        + name;
  }

  /**
   * Drops a database {@link #freshDatabaseUrl} made, so a long run does not leave its files to the
   * server's end.
   */
  public static void drop(String url) throws Exception {
    PgConnectOptions options = PgConnectOptions.fromUri(url);
    try (Connection c =
        DriverManager.getConnection(
            jdbcUrl(new PgConnectOptions(options).setDatabase("postgres")),
            options.getUser(),
            options.getPassword())) {
      c.createStatement()
          .execute("DROP DATABASE IF EXISTS " + options.getDatabase() + " WITH (FORCE)");
    }
  }

  /**
   * A {@code postgresql://} URL of a new database migrated up to {@code version} only: the schema
   * of an older release, for a test to fill before the API migrates it the rest of the way.
   */
  public static String freshDatabaseAt(String version) throws Exception {
    String url = freshDatabaseUrl();
    PgConnectOptions options = PgConnectOptions.fromUri(url);
    Flyway.configure()
        .dataSource(jdbcUrl(options), options.getUser(), options.getPassword())
        .locations("classpath:db/migration")
        .target(version)
        .load()
        .migrate();
    return url;
  }

  /** A JDBC connection to the database of a {@code postgresql://} URL. */
  public static Connection connect(String url) throws Exception {
    PgConnectOptions options = PgConnectOptions.fromUri(url);
    return DriverManager.getConnection(jdbcUrl(options), options.getUser(), options.getPassword());
  }

  private static String jdbcUrl(PgConnectOptions options) {
    return "jdbc:postgresql://"
        + options.getHost()
        + ":"
        + options.getPort()
        + "/"
        + options.getDatabase();
  }

  private static String startServer() throws Exception {
    String external = System.getenv("WARMMETAL_TEST_DATABASE_URL");
    if (external != null && !external.isBlank()) {
      return external;
    }
    if ("true".equals(System.getenv("WARMMETAL_TEST_TESTCONTAINERS"))) {
      var container = new PostgreSQLContainer("postgres:17-alpine");
      container.start();
      Runtime.getRuntime().addShutdownHook(new Thread(container::stop));
      return "postgresql://"
          + container.getUsername()
          + ":"
          + container.getPassword()
          + "@"
          + container.getHost()
          + ":"
          + container.getMappedPort(5432)
          + "/"
          + container.getDatabaseName();
    }
    Path dir = Files.createTempDirectory("warmmetal-test-pg");
    // Traversable, so the embedded server (run as an unprivileged user when tests run as root) can
    // reach it.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
    EmbeddedPostgres pg = EmbeddedPostgres.start(dir);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  pg.close();
                  ApiFixture.deleteTree(dir);
                }));
    return pg.url("postgres");
  }
}
