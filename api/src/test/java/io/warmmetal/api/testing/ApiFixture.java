package io.warmmetal.api.testing;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.WarmMetalApi;
import io.warmmetal.api.config.ApiConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A real API server on a loopback port with its own fresh PostgreSQL database, a known admin token
 * and a client that checks responses against the contract. The pool manager's timer is slow; tests
 * call {@link #reconcilePools()}.
 */
public final class ApiFixture implements AutoCloseable {
  public static final String ADMIN = "test-admin-token-0123456789abcdef";

  public final Vertx vertx;
  public final WarmMetalApi api;
  public final ApiClient client;

  /** A client of the management port ({@code /metrics}, {@code /healthz}, {@code /readyz}). */
  public final ApiClient management;

  public final Path dataDir;

  private final boolean ownDataDir;

  private ApiFixture(
      Vertx vertx,
      WarmMetalApi api,
      ApiClient client,
      ApiClient management,
      Path dataDir,
      boolean ownDataDir) {
    this.vertx = vertx;
    this.api = api;
    this.client = client;
    this.management = management;
    this.dataDir = dataDir;
    this.ownDataDir = ownDataDir;
  }

  public static ApiFixture start(Vertx vertx) throws Exception {
    return start(vertx, Map.of());
  }

  /** Starts a server; {@code overrides} are WARMMETAL_* settings on top of the test defaults. */
  public static ApiFixture start(Vertx vertx, Map<String, String> overrides) throws Exception {
    Map<String, String> env = TestEnv.loopback(Map.of());
    boolean ownDataDir = !overrides.containsKey("WARMMETAL_DATA_DIR");
    if (ownDataDir) {
      env.put("WARMMETAL_DATA_DIR", Files.createTempDirectory("warmmetal-test-data").toString());
    }
    env.put("WARMMETAL_ADMIN_TOKEN", ADMIN);
    if (!overrides.containsKey("WARMMETAL_DATABASE_URL")) {
      env.put("WARMMETAL_DATABASE_URL", TestDatabase.freshDatabaseUrl());
    }
    env.put("WARMMETAL_POOL_INTERVAL_MS", "3600000");
    env.put("WARMMETAL_HTTP_VERTICLES", "2");
    env.putAll(overrides);
    env.values().removeIf(v -> v == null || v.isEmpty());
    Path dataDir = Path.of(env.get("WARMMETAL_DATA_DIR"));
    WarmMetalApi api;
    try {
      api = WarmMetalApi.start(vertx, ApiConfig.fromEnv(env)).await();
    } catch (RuntimeException e) {
      if (ownDataDir) {
        deleteTree(dataDir);
      }
      throw e;
    }
    OpenAPIContract contract = OpenAPIContract.from(vertx, WarmMetalApi.CONTRACT).await();
    return new ApiFixture(
        vertx,
        api,
        new ApiClient(vertx, api.port(), contract),
        new ApiClient(vertx, api.metricsPort(), contract),
        dataDir,
        ownDataDir);
  }

  /** The Prometheus text the management port serves now. */
  public String scrape() {
    return management.get("/metrics", null).raw();
  }

  public Pool db() {
    return api.database();
  }

  /** Registers {@code n} machines of the given facts; prepared ones go straight to warm. */
  public List<String> registerMachines(int n, JsonObject facts, boolean prepared) {
    return registerMachines(n, facts, prepared, new JsonObject());
  }

  /**
   * Registers {@code n} machines of the given facts carrying these labels; prepared ones go
   * straight to warm.
   */
  public List<String> registerMachines(
      int n, JsonObject facts, boolean prepared, JsonObject labels) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      var r =
          client.post(
              "/v1/machines",
              ADMIN,
              new JsonObject()
                  .put("name", "node-" + UUID.randomUUID())
                  .put("address", "192.0.2." + (i % 250 + 1))
                  .put("facts", facts)
                  .put("labels", labels)
                  .put("prepared", prepared));
      if (r.status() != 201) {
        throw new AssertionError("registration failed: " + r.raw());
      }
      ids.add(r.body().getString("id"));
    }
    return ids;
  }

  public static JsonObject facts(int cpus, int memoryGiB) {
    return new JsonObject()
        .put("cpus", cpus)
        .put("memoryMiB", memoryGiB * 1024)
        .put("arch", "x86_64");
  }

  public static JsonObject gpuFacts(int cpus, int memoryGiB, int gpus, String model) {
    JsonArray list = new JsonArray();
    for (int i = 0; i < gpus; i++) {
      list.add(new JsonObject().put("model", model));
    }
    return facts(cpus, memoryGiB).put("gpus", list);
  }

  public void reconcilePools() {
    api.lifecycle().reconcilePools().await();
  }

  /** One SQL query's single numeric result, for checking what was (not) written. */
  public long count(String sql, Object... args) {
    Row row = db().preparedQuery(sql).execute(Tuple.wrap(args)).await().iterator().next();
    return row.getLong(0);
  }

  /** The machine's open commands of a type, oldest first. */
  public List<String> openCommands(String machineId, String type) {
    List<String> ids = new ArrayList<>();
    db().preparedQuery(
            "SELECT id FROM commands WHERE machine_id = $1 AND type = $2 AND status = 'queued' "
                + "ORDER BY seq")
        .execute(Tuple.of(machineId, type))
        .await()
        .forEach(r -> ids.add(r.getString("id")));
    return ids;
  }

  /** Reports a command's result as an agent (or operator) would. */
  public void report(String commandId, boolean ok) {
    var r =
        client.post(
            "/v1/commands/" + commandId + "/result",
            ADMIN,
            new JsonObject().put("status", ok ? "succeeded" : "failed"));
    if (r.status() != 200) {
      throw new AssertionError("reporting " + commandId + " failed: " + r.raw());
    }
  }

  /** Mints a token with a role (in the project 'default') and returns its secret. */
  public String token(String role) {
    return token(role, "default");
  }

  /** Mints a token with a role in a project (which must exist) and returns its secret. */
  public String token(String role, String project) {
    return mintToken(role + "-token", role, project).getString("token");
  }

  /**
   * Mints a token and returns the create answer: its id, its secret and, for every role but boot,
   * its access key pair.
   */
  public JsonObject mintToken(String name, String role, String project) {
    var r =
        client.post(
            "/v1/tokens",
            ADMIN,
            new JsonObject().put("name", name).put("role", role).put("project", project));
    if (r.status() != 201) {
      throw new AssertionError("token creation failed: " + r.raw());
    }
    return r.body();
  }

  @Override
  public void close() {
    api.stop().await();
    if (ownDataDir) {
      deleteTree(dataDir);
    }
  }

  static void deleteTree(Path dir) {
    try (var walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (Exception ignored) {
      // best effort: a temporary directory
    }
  }
}
