package io.warmmetal.api.testing;

import io.warmmetal.api.db.Database;
import io.warmmetal.api.db.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The real PostgreSQL the tests run against, one per test JVM, with a fresh database per fixture:
 * <ul>
 *   <li>{@code WARMMETAL_TEST_DATABASE_URL} (a {@code postgresql://} URL with rights to create databases): that
 *       server;</li>
 *   <li>{@code WARMMETAL_TEST_TESTCONTAINERS=true} where a Docker daemon answers: a {@code postgres:17}
 *       container;</li>
 *   <li>otherwise the embedded PostgreSQL the product itself ships.</li>
 * </ul>
 */
public final class TestDatabase {
  private static final AtomicInteger COUNTER = new AtomicInteger();
  private static String serverUrl;

  private TestDatabase() {}

  /** A {@code postgresql://} URL of a new, empty database. */
  public static synchronized String freshDatabaseUrl() throws Exception {
    if (serverUrl == null) {
      serverUrl = startServer();
    }
    String name = "wmtest_" + ProcessHandle.current().pid() + "_" + COUNTER.incrementAndGet();
    var options = Database.connectOptions(serverUrl);
    String jdbcBase = "jdbc:postgresql://" + options.getHost() + ":" + options.getPort() + "/";
    try (Connection c = DriverManager.getConnection(jdbcBase + options.getDatabase(), options.getUser(),
        options.getPassword())) {
      c.createStatement().execute("CREATE DATABASE " + name);
    }
    return "postgresql://" + options.getUser() + ":" + options.getPassword() + "@" + options.getHost() + ":"
        + options.getPort() + "/" + name;
  }

  private static String startServer() throws Exception {
    String external = System.getenv("WARMMETAL_TEST_DATABASE_URL");
    if (external != null && !external.isBlank()) {
      return external;
    }
    if ("true".equals(System.getenv("WARMMETAL_TEST_TESTCONTAINERS"))) {
      var container = new org.testcontainers.postgresql.PostgreSQLContainer("postgres:17-alpine");
      container.start();
      Runtime.getRuntime().addShutdownHook(new Thread(container::stop));
      return "postgresql://" + container.getUsername() + ":" + container.getPassword() + "@" + container.getHost()
          + ":" + container.getMappedPort(5432) + "/" + container.getDatabaseName();
    }
    Path dir = Files.createTempDirectory("warmmetal-test-pg");
    // Traversable, so the embedded server (run as an unprivileged user when tests run as root) can reach it.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
    EmbeddedPostgres pg = EmbeddedPostgres.start(dir);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      pg.close();
      ApiFixture.deleteTree(dir);
    }));
    return pg.url("postgres");
  }
}
