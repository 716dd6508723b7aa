package io.warmmetal.api;

import io.vertx.core.Vertx;
import io.warmmetal.api.config.ApiConfig;
import io.warmmetal.api.crypto.CertificateAuthority;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code java -jar warmmetal-api.jar}: flags override the {@code WARMMETAL_*} environment
 * variables.
 */
@Command(
    name = "warmmetal-api",
    mixinStandardHelpOptions = true,
    version = "WarmMetal API 0.1.0",
    subcommands = Main.InitCa.class,
    description =
        "Serves the WarmMetal instances API. With no database URL it runs an embedded PostgreSQL.")
public final class Main implements Callable<Integer> {
  /** Logging settings, read by the logback configurations rather than {@link ApiConfig}. */
  public static final Set<String> LOGGING_VARIABLES =
      Set.of("WARMMETAL_LOG_FORMAT", "WARMMETAL_LOG_LEVEL", "WARMMETAL_ACCESS_LOG");

  /**
   * {@code init-ca DIR}: makes the agents' CA ({@code ca.crt}, {@code ca.key} 0600) in DIR unless
   * it is there, and prints its pin — for replicas that must share one CA (a Kubernetes Secret, a
   * compose volume).
   */
  @Command(
      name = "init-ca",
      mixinStandardHelpOptions = true,
      description = "Create the agents' CA in a directory (if absent) and print its pin.")
  static final class InitCa implements Callable<Integer> {
    @CommandLine.Parameters(index = "0", description = "directory for ca.crt and ca.key")
    Path dir;

    @Override
    public Integer call() throws Exception {
      System.out.println(
          CertificateAuthority.ensure(dir.resolve("ca.crt"), dir.resolve("ca.key")).pin().value());
      return 0;
    }
  }

  @Option(names = "--port", description = "HTTP port (WARMMETAL_HTTP_PORT, default 8080)")
  Integer port;

  @Option(names = "--host", description = "listen address (WARMMETAL_HTTP_HOST, default 0.0.0.0)")
  String host;

  @Option(
      names = "--metrics-port",
      description =
          "management port: /metrics, /healthz, /readyz (WARMMETAL_METRICS_PORT, default 9090)")
  Integer metricsPort;

  @Option(
      names = "--database-url",
      description = "postgresql://user:password@host:port/db (WARMMETAL_DATABASE_URL)")
  String databaseUrl;

  @Option(
      names = "--data-dir",
      description = "state directory (WARMMETAL_DATA_DIR, default ./warmmetal-data)")
  String dataDir;

  @Option(
      names = "--demo",
      paramLabel = "N",
      description =
          "also run N simulated machines (the fleet simulator, "
              + "fleet/target/warmmetal-fleet.jar) to try the API on one host (WARMMETAL_DEMO_MACHINES, default 0)")
  Integer demo;

  @Option(names = "--log-format", description = "text or json (WARMMETAL_LOG_FORMAT, default text)")
  String logFormat;

  public static void main(String[] args) {
    System.exit(new CommandLine(new Main()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    Map<String, String> env = new HashMap<>(System.getenv());
    put(env, "WARMMETAL_HTTP_PORT", port == null ? null : port.toString());
    put(env, "WARMMETAL_HTTP_HOST", host);
    put(env, "WARMMETAL_METRICS_PORT", metricsPort == null ? null : metricsPort.toString());
    put(env, "WARMMETAL_DATABASE_URL", databaseUrl);
    put(env, "WARMMETAL_DATA_DIR", dataDir);
    put(env, "WARMMETAL_LOG_FORMAT", logFormat);
    put(env, "WARMMETAL_DEMO_MACHINES", demo == null ? null : demo.toString());
    if ("json".equalsIgnoreCase(env.get("WARMMETAL_LOG_FORMAT"))) {
      System.setProperty(
          "logback.configurationFile", "logback-json.xml"); // before the first logger exists
    }
    ApiConfig config = ApiConfig.fromEnv(env);
    Vertx vertx = Vertx.vertx();
    WarmMetalApi api;
    try {
      api = WarmMetalApi.start(vertx, config).await();
    } catch (Exception e) {
      LoggerFactory.getLogger(Main.class)
          .error("WarmMetal API failed to start: {}", e.getMessage(), e);
      vertx.close();
      return 1;
    }
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  // Stop serving and stop the embedded database; Vert.x's own close need not be
                  // awaited (its completion is
                  // dispatched to event loops that are closing, so waiting on it could hang the
                  // exit).
                  api.stop().await();
                  vertx.close();
                },
                "warmmetal-shutdown"));
    new CountDownLatch(1).await(); // serve until the JVM is asked to stop
    return 0;
  }

  private static void put(Map<String, String> env, String key, String value) {
    if (value != null) {
      env.put(key, value);
    }
  }
}
