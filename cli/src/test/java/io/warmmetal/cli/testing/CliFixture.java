package io.warmmetal.cli.testing;

import io.vertx.core.Vertx;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.BootImageFixture;
import io.warmmetal.cli.Cli;
import io.warmmetal.cli.session.Session;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The real API on loopback (embedded PostgreSQL) and the CLI run in-process against it, with its
 * own environment (admin token, API URL, a config file in a temporary directory) and captured
 * output. A JUnit extension: {@code @RegisterExtension static} for one API per class, an instance
 * field for one per test.
 */
public final class CliFixture
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
  public Vertx vertx;
  public ApiFixture api;
  public Path home;
  private boolean perTest;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    start();
  }

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    if (api == null) {
      perTest = true;
      start();
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    if (perTest) {
      close();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (api != null) {
      close();
    }
  }

  private void start() throws Exception {
    vertx = Vertx.vertx();
    home = Files.createTempDirectory("warmmetal-cli-test");
    Path boot = Files.createDirectories(home.resolve("boot"));
    BootImageFixture.install(boot, "v1.20.2-aaaaaaaaaaaa", 1);
    api = ApiFixture.start(vertx, Map.of("WARMMETAL_BOOT_DIR", boot.toString()));
  }

  public String url() {
    return "http://127.0.0.1:" + api.api.port();
  }

  /** The environment a CLI run gets: the API, the admin token, a config file of its own. */
  public Map<String, String> env() {
    Map<String, String> env = new HashMap<>();
    env.put("WARMMETAL_API", url());
    env.put("WARMMETAL_TOKEN", ApiFixture.ADMIN);
    env.put("WARMMETAL_CONFIG", home.resolve("config.yaml").toString());
    return env;
  }

  public Run run(String... args) {
    return run(env(), args);
  }

  public static Run run(Map<String, String> env, String... args) {
    Run run = new Run();
    run.code = run.start(env, args);
    return run;
  }

  /**
   * Runs the CLI on a thread of its own (for --wait and --follow); its output can be read while it
   * runs.
   */
  public Run background(String... args) {
    Run run = new Run();
    Map<String, String> env = env();
    run.thread = new Thread(() -> run.done.complete(run.start(env, args)), "cli-" + args[0]);
    run.thread.start();
    return run;
  }

  /** One CLI run: exit code and what it printed. */
  public static final class Run {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final CompletableFuture<Integer> done = new CompletableFuture<>();
    private Thread thread;
    private int code;

    private int start(Map<String, String> env, String... args) {
      Session session =
          new Session(
              env,
              new ByteArrayInputStream(new byte[0]),
              new PrintWriter(out, true),
              new PrintWriter(err, true),
              Clock.systemUTC());
      return Cli.run(session, args);
    }

    public String out() {
      return out.toString();
    }

    public String err() {
      return err.toString();
    }

    /** The exit code; for a background run, waits for it (at most a minute). */
    public int code() {
      try {
        return thread == null ? code : done.get(60, TimeUnit.SECONDS);
      } catch (Exception e) {
        throw new AssertionError("the CLI did not finish: " + err(), e);
      }
    }

    /** Interrupts a background run (as Ctrl-C would end it) and returns its exit code. */
    public int stop() {
      thread.interrupt();
      return code();
    }

    @Override
    public String toString() {
      return "--- stdout\n" + out() + "--- stderr\n" + err();
    }
  }

  private void close() {
    api.close();
    vertx.close().await();
    api = null;
  }
}
