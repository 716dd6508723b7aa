package io.warmmetal.api.bench;

import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.db.Database;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code pgbench} of the launch function alone: what the database does with launches when no API is
 * in front. Each launch is of one machine with a client token, as the benchmark's; before each run
 * the machines the API (or the run before) claimed are made warm again, so the table is the one the
 * API had, and a run claims as many as the API's did.
 */
final class FunctionBenchmark {
  private static final String SHAPE = "x86-32c-256g";
  private static final Pattern TPS = Pattern.compile("tps = ([0-9.]+)");

  private final Vertx vertx;
  private final String databaseUrl;
  private final Path pgbench;

  private FunctionBenchmark(Vertx vertx, String databaseUrl, Path pgbench) {
    this.vertx = vertx;
    this.databaseUrl = databaseUrl;
    this.pgbench = pgbench;
  }

  /** Null when pgbench is not installed. */
  static FunctionBenchmark locate(Vertx vertx, String databaseUrl) throws IOException {
    Path pgbench = find();
    if (pgbench == null) {
      System.out.println(
          "pgbench not found (apt-get install postgresql-client): the function alone not measured");
      return null;
    }
    return new FunctionBenchmark(vertx, databaseUrl, pgbench);
  }

  /**
   * Launches/s with {@code clients} connections, each call carrying {@code perCall} launches,
   * {@code launches} in all.
   */
  double launchesPerSecond(int clients, int perCall, int launches) throws Exception {
    Pool db = Database.pool(vertx, Database.connectOptions(databaseUrl), 1);
    try {
      // The API's machines again, warm and unclaimed: the same table, the same spread of claims as
      // the API had.
      db.query("UPDATE machines SET state = 'warm', instance_id = NULL WHERE state <> 'warm'")
          .execute()
          .await();
      db.query("VACUUM ANALYZE machines").execute().await();
    } finally {
      db.close().await();
    }
    Path script = Files.createTempFile("launch", ".sql");
    try {
      Files.writeString(script, script(perCall));
      Process p =
          new ProcessBuilder(
                  pgbench.toString(),
                  "-n",
                  "-f",
                  script.toString(),
                  "-c",
                  Integer.toString(clients),
                  "-j",
                  "2",
                  "-t",
                  Integer.toString(Math.max(1, launches / perCall / clients)),
                  databaseUrl)
              .redirectErrorStream(true)
              .start();
      String out = new String(p.getInputStream().readAllBytes());
      if (p.waitFor() != 0) {
        throw new IllegalStateException("pgbench failed: " + out);
      }
      Matcher m = TPS.matcher(out);
      if (!m.find()) {
        throw new IllegalStateException("no rate in pgbench's output: " + out);
      }
      return Double.parseDouble(m.group(1)) * perCall;
    } finally {
      Files.delete(script);
    }
  }

  /** One call of {@code launch_instances_batch} with {@code n} launches, as the API sends them. */
  private static String script(int n) {
    String each = "ARRAY(SELECT %s FROM generate_series(1, " + n + "))";
    String all = "array_fill(%s, ARRAY[" + n + "])";
    return ("SELECT launch_instances_batch("
        + String.join(
            ", ",
            each.formatted("'r-' || substr(md5(random()::text), 1, 17)"),
            all.formatted("'tok-pgbench'::text"),
            each.formatted("md5(random()::text)"),
            all.formatted("'\\x00'::bytea"),
            all.formatted("'[\"" + SHAPE + "\"]'::jsonb"),
            all.formatted("false"),
            all.formatted("1"),
            all.formatted("1"),
            all.formatted("'{}'::jsonb"),
            all.formatted("'null'::jsonb"),
            all.formatted("NULL::bytea"),
            all.formatted("false"),
            all.formatted("false"),
            all.formatted("'{}'::jsonb"),
            each.formatted("'i-' || substr(md5(random()::text), 1, 17)"),
            each.formatted("'cmd-' || substr(md5(random()::text), 1, 16)"),
            all.formatted("NULL::text"),
            all.formatted("'default'::text"),
            all.formatted("false"),
            all.formatted("false"))
        + ");\n");
  }

  private static Path find() throws IOException {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      Path candidate = Path.of(dir, "pgbench");
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    Path versions = Path.of("/usr/lib/postgresql");
    if (Files.isDirectory(versions)) {
      try (var dirs = Files.list(versions)) {
        return dirs.map(d -> d.resolve("bin/pgbench"))
            .filter(Files::isExecutable)
            .findFirst()
            .orElse(null);
      }
    }
    return null;
  }
}
