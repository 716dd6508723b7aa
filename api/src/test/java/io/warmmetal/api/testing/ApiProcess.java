package io.warmmetal.api.testing;

import io.warmmetal.api.db.Database;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The API as operators run it, a separate JVM ({@code io.warmmetal.api.Main} on this JVM's
 * classpath: the code under test, also where {@code mvn verify} has not packaged the jar yet), on
 * loopback ports, that a test can kill -9.
 */
public final class ApiProcess implements AutoCloseable {
  /** A test's replica: a small heap and a quick start. */
  private static final List<String> TEST_JVM =
      List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

  public final String name;
  public final int httpPort;
  public final int agentPort;
  public final int metricsPort;
  public final Path log;
  private final Map<String, String> env;
  private final List<String> jvmOptions;
  private Process process;

  private ApiProcess(String name, Map<String, String> env, List<String> jvmOptions, Path log) {
    this.name = name;
    this.env = env;
    this.jvmOptions = jvmOptions;
    this.httpPort = Integer.parseInt(env.get("WARMMETAL_HTTP_PORT"));
    this.agentPort = Integer.parseInt(env.get("WARMMETAL_AGENT_PORT"));
    this.metricsPort = Integer.parseInt(env.get("WARMMETAL_METRICS_PORT"));
    this.log = log;
  }

  /**
   * Starts a test replica on fresh loopback ports; {@code settings} are its WARMMETAL_* variables.
   */
  public static ApiProcess start(String name, Map<String, String> settings) throws Exception {
    Map<String, String> env = new HashMap<>(settings);
    env.putIfAbsent("WARMMETAL_HTTP_VERTICLES", "2");
    env.putIfAbsent("WARMMETAL_DB_POOL_SIZE", "8");
    return start(name, env, TEST_JVM);
  }

  /**
   * Starts a replica on fresh loopback ports with these JVM options (a benchmark's heap and
   * collector).
   */
  public static ApiProcess start(String name, Map<String, String> settings, List<String> jvmOptions)
      throws Exception {
    Map<String, String> env = new HashMap<>(settings);
    env.put("WARMMETAL_HTTP_HOST", "127.0.0.1");
    env.put("WARMMETAL_HTTP_PORT", String.valueOf(freePort()));
    env.put("WARMMETAL_AGENT_HOST", "127.0.0.1");
    env.put("WARMMETAL_AGENT_PORT", String.valueOf(freePort()));
    env.put("WARMMETAL_METRICS_HOST", "127.0.0.1");
    env.put("WARMMETAL_METRICS_PORT", String.valueOf(freePort()));
    ApiProcess api =
        new ApiProcess(name, env, jvmOptions, Files.createTempFile("warmmetal-" + name, ".log"));
    api.start();
    return api;
  }

  public static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /**
   * This JVM's classpath for a child JVM: under {@code mvn exec:java} the project's is its class
   * loader's, not {@code java.class.path} (Maven's own).
   */
  public static String classpath() {
    if (Thread.currentThread().getContextClassLoader() instanceof URLClassLoader loader
        && loader.getURLs().length > 0) {
      return Arrays.stream(loader.getURLs())
          .map(url -> Path.of(URI.create(url.toString())).toString())
          .collect(Collectors.joining(File.pathSeparator));
    }
    return System.getProperty("java.class.path");
  }

  /** The {@code java} of this JVM. */
  public static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /** Starts (again) on the same ports and waits until it is ready. */
  public void start() throws Exception {
    List<String> command = new ArrayList<>(List.of(java()));
    command.addAll(jvmOptions);
    command.addAll(List.of("-cp", classpath(), "io.warmmetal.api.Main"));
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    pb.environment().keySet().removeIf(k -> k.startsWith("WARMMETAL_"));
    pb.environment().putAll(env);
    process = pb.start();
    awaitReady(Duration.ofSeconds(60));
  }

  private void awaitReady(Duration timeout) throws Exception {
    Readiness.await(name, process, httpPort, "/readyz", timeout, this::tail);
  }

  /**
   * kill -9: {@link Process#destroyForcibly()} is SIGKILL on Linux; nothing of the process runs
   * after it.
   */
  public void kill() throws InterruptedException {
    process.destroyForcibly().waitFor();
  }

  public boolean alive() {
    return process != null && process.isAlive();
  }

  /** The process id (for jcmd, /proc). */
  public long pid() {
    return process.pid();
  }

  public String tail() {
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
  public static Connection jdbc(String url) throws Exception {
    var options = Database.connectOptions(url);
    return DriverManager.getConnection(
        "jdbc:postgresql://"
            + options.getHost()
            + ":"
            + options.getPort()
            + "/"
            + options.getDatabase(),
        options.getUser(),
        options.getPassword());
  }

  /** A query's single number. */
  public static long count(Connection sql, String query) {
    try (ResultSet rs = sql.createStatement().executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new AssertionError(query, e);
    }
  }

  /** A query's first column. */
  public static List<String> rows(Connection sql, String query) {
    List<String> out = new ArrayList<>();
    try (ResultSet rs = sql.createStatement().executeQuery(query)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    } catch (SQLException e) {
      throw new AssertionError(query, e);
    }
    return out;
  }
}
