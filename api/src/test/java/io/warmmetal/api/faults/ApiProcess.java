package io.warmmetal.api.faults;

import io.warmmetal.api.db.Database;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The API as operators run it, a separate JVM ({@code io.warmmetal.api.Main} on this test's classpath: the code under
 * test, also where {@code mvn verify} has not packaged the jar yet), on loopback ports, that a test can kill -9.
 */
final class ApiProcess implements AutoCloseable {
  final String name;
  final int httpPort;
  final int agentPort;
  final Path log;
  private final Map<String, String> env;
  private Process process;

  private ApiProcess(String name, Map<String, String> env, int httpPort, int agentPort, Path log) {
    this.name = name;
    this.env = env;
    this.httpPort = httpPort;
    this.agentPort = agentPort;
    this.log = log;
  }

  /** Starts a replica on fresh loopback ports; {@code settings} are its WARMMETAL_* variables. */
  static ApiProcess start(String name, Map<String, String> settings) throws Exception {
    Map<String, String> env = new HashMap<>(settings);
    int http = freePort();
    int agent = freePort();
    env.put("WARMMETAL_HTTP_HOST", "127.0.0.1");
    env.put("WARMMETAL_HTTP_PORT", String.valueOf(http));
    env.put("WARMMETAL_AGENT_HOST", "127.0.0.1");
    env.put("WARMMETAL_AGENT_PORT", String.valueOf(agent));
    env.putIfAbsent("WARMMETAL_HTTP_VERTICLES", "2");
    env.putIfAbsent("WARMMETAL_DB_POOL_SIZE", "8");
    ApiProcess api = new ApiProcess(name, env, http, agent, Files.createTempFile("warmmetal-" + name, ".log"));
    api.start();
    return api;
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** Starts (again) on the same ports and waits until it is ready. */
  void start() throws Exception {
    List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
        "io.warmmetal.api.Main");
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    pb.environment().keySet().removeIf(k -> k.startsWith("WARMMETAL_"));
    pb.environment().putAll(env);
    process = pb.start();
    awaitReady(Duration.ofSeconds(60));
  }

  private void awaitReady(Duration timeout) throws Exception {
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new AssertionError(name + " exited with " + process.exitValue() + ":\n" + tail());
      }
      try {
        var r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/readyz"))
            .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      Thread.sleep(100);
    }
    throw new AssertionError(name + " not ready within " + timeout + ":\n" + tail());
  }

  /** kill -9: {@link Process#destroyForcibly()} is SIGKILL on Linux; nothing of the process runs after it. */
  void kill() throws InterruptedException {
    process.destroyForcibly().waitFor();
  }

  boolean alive() {
    return process != null && process.isAlive();
  }

  String tail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  @Override
  public void close() throws Exception {
    if (process != null && process.isAlive()) {
      kill();
    }
  }

  /** A JDBC connection to a {@code postgresql://} database, for checking invariants in SQL. */
  static Connection jdbc(String url) throws Exception {
    var options = Database.connectOptions(url);
    return DriverManager.getConnection("jdbc:postgresql://" + options.getHost() + ":" + options.getPort() + "/"
        + options.getDatabase(), options.getUser(), options.getPassword());
  }

  /** A query's single number. */
  static long count(Connection sql, String query) {
    try (java.sql.ResultSet rs = sql.createStatement().executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    } catch (java.sql.SQLException e) {
      throw new AssertionError(query, e);
    }
  }

  /** A query's first column. */
  static List<String> rows(Connection sql, String query) {
    List<String> out = new java.util.ArrayList<>();
    try (java.sql.ResultSet rs = sql.createStatement().executeQuery(query)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    } catch (java.sql.SQLException e) {
      throw new AssertionError(query, e);
    }
    return out;
  }
}
