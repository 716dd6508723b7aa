package io.warmmetal.api.testing;

import io.warmmetal.api.config.ApiConfig;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;

/** The settings every test and benchmark server shares: loopback only, ports picked free. */
public final class TestEnv {
  private TestEnv() {}

  /** Loopback listeners on free ports, on top of {@code base}. */
  public static Map<String, String> loopback(Map<String, String> base) {
    Map<String, String> env = new HashMap<>(base);
    env.put("WARMMETAL_HTTP_HOST", "127.0.0.1");
    env.put("WARMMETAL_HTTP_PORT", "0");
    env.put("WARMMETAL_METRICS_HOST", "127.0.0.1");
    env.put("WARMMETAL_METRICS_PORT", "0");
    env.put("WARMMETAL_AGENT_HOST", "127.0.0.1");
    env.put("WARMMETAL_AGENT_PORT", "0");
    return env;
  }

  /**
   * A benchmark server's settings: the machine's WARMMETAL_* variables (e.g. the pool size) apply,
   * then loopback, a fresh data directory and database, the given admin token, and no per-address
   * cap on the agents' port (but its total) unless one is set.
   */
  public static ApiConfig benchmark(String adminToken) throws Exception {
    Map<String, String> env = loopback(System.getenv());
    env.put("WARMMETAL_DATA_DIR", Files.createTempDirectory("warmmetal-bench").toString());
    env.put("WARMMETAL_ADMIN_TOKEN", adminToken);
    env.put("WARMMETAL_DATABASE_URL", TestDatabase.freshDatabaseUrl());
    // Thousands of simulated agents enroll and connect at once, all from loopback: a whole fleet
    // behind one
    // load-balancer address, connecting together, is more than the default per-address cap is for.
    env.putIfAbsent("WARMMETAL_AGENT_MAX_CONNECTIONS_PER_ADDRESS", "1000000");
    return ApiConfig.fromEnv(env);
  }
}
