package io.warmmetal.api.testing;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.api.crypto.SecretBox;
import io.warmmetal.api.db.Database;
import io.warmmetal.api.lifecycle.Committed;
import io.warmmetal.api.lifecycle.EnrollmentGrants;
import io.warmmetal.api.lifecycle.HardwareInventory;
import io.warmmetal.api.lifecycle.Host;
import io.warmmetal.api.lifecycle.LaunchBatching;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.lifecycle.Refusal;
import io.warmmetal.api.metrics.FleetMetrics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The core alone: a {@link Lifecycle} on its own fresh, migrated PostgreSQL database (the same
 * {@link TestDatabase} and {@link Database} calls the server makes), with no HTTP, no agent channel
 * and no pool manager — nothing moves a machine but the test. Its two ports are the test's: {@link
 * Grants} hands out what each enrollment token grants, {@link Hardware} holds the hardware records.
 * Every {@link Committed} notice is kept in {@link #notices}.
 */
public final class LifecycleFixture implements AutoCloseable {
  public final Lifecycle lifecycle;
  public final Pool db;
  public final Grants grants = new Grants();
  public final Hardware hardware = new Hardware();
  public final List<Committed> notices = new CopyOnWriteArrayList<>();

  private final String databaseUrl;
  private final Path dataDir;

  private LifecycleFixture(Vertx vertx, String databaseUrl, Pool db, Path dataDir)
      throws Exception {
    this.databaseUrl = databaseUrl;
    this.db = db;
    this.dataDir = dataDir;
    this.lifecycle =
        Lifecycle.create(
            vertx,
            db,
            SecretBox.load(Optional.empty(), dataDir),
            new FleetMetrics(),
            CertificateAuthority.loadOrCreate(dataDir, Optional.empty(), Optional.empty()),
            Duration.ofDays(1),
            grants,
            hardware,
            new LaunchBatching(32, 4));
    lifecycle.onCommit(notices::add);
  }

  public static LifecycleFixture start(Vertx vertx) throws Exception {
    String url = TestDatabase.freshDatabaseUrl();
    PgConnectOptions options = Database.connectOptions(url);
    Database.migrate(vertx, options).await();
    return new LifecycleFixture(
        vertx,
        url,
        Database.pool(vertx, options, 4),
        Files.createTempDirectory("warmmetal-lifecycle-test"));
  }

  /** One SQL query's single numeric result. */
  public long count(String sql, Object... args) {
    return db.preparedQuery(sql).execute(Tuple.wrap(args)).await().iterator().next().getLong(0);
  }

  /**
   * Runs a statement standing for what an edge owns (a pool's target, a delivery by the channel).
   */
  public void sql(String sql, Object... args) {
    db.preparedQuery(sql).execute(Tuple.wrap(args)).await();
  }

  @Override
  public void close() throws Exception {
    db.close().await();
    ApiFixture.deleteTree(dataDir);
    TestDatabase.drop(databaseUrl);
  }

  /**
   * The enrollment tokens, as the core sees them: a token grants what the test said, once per
   * {@link #put}.
   */
  public static final class Grants implements EnrollmentGrants {
    private final Map<String, List<Grant>> unused = new ConcurrentHashMap<>();

    /** Each grant used, with the machine it enrolled. */
    public final Map<String, String> enrolled = new ConcurrentHashMap<>();

    public void put(String token, Grant grant) {
      unused.computeIfAbsent(token, t -> new CopyOnWriteArrayList<>()).add(grant);
    }

    @Override
    public Future<Grant> consume(SqlConnection tx, String token) {
      List<Grant> left = unused.getOrDefault(token, List.of());
      if (left.isEmpty()) {
        return Future.failedFuture(
            Refusal.of(Refusal.Reason.Unauthorized, "the enrollment token is unknown"));
      }
      return Future.succeededFuture(left.remove(0));
    }

    @Override
    public Future<Void> granted(SqlConnection tx, Grant grant, String machineId) {
      enrolled.put(grant.tokenId(), machineId);
      return Future.succeededFuture();
    }
  }

  /** The hardware records: a record by primary MAC, with the labels it gives. */
  public static final class Hardware implements HardwareInventory {
    private final Map<String, JsonObject> byMac = new ConcurrentHashMap<>();

    public void expect(String mac, JsonObject labels) {
      byMac.put(mac, labels);
    }

    @Override
    public Future<Optional<Match>> admit(SqlConnection tx, Host host, String machineId) {
      JsonObject labels = host.primaryMac() == null ? null : byMac.get(host.primaryMac());
      return Future.succeededFuture(
          Optional.ofNullable(labels).map(l -> new Match(host.primaryMac(), l)));
    }
  }
}
