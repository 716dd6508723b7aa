package io.warmmetal.api;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.warmmetal.api.config.ApiConfig;
import io.warmmetal.api.config.BuiltJar;
import io.warmmetal.api.enrollment.EnrollmentTokens;
import io.warmmetal.api.lifecycle.ShapeNamer;
import io.warmmetal.protocol.CaPin;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --demo N}: the fleet simulator's jar run as a child process with N simulated machines, so
 * one command gives a newcomer an API with machines to pool and launch on. The API hands the fleet
 * what a user would otherwise copy by hand — its agent port, its CA pin and an enrollment token for
 * N machines (in a 0600 file) — and stops it when it stops; the fleet also exits if the API is
 * killed ({@code --exit-with-parent}). Its machines keep their identities in the data directory, so
 * a restart gets them back. A process rather than a library: the fleet carries a Kubernetes client
 * the API has no use for, and the api module depends on the fleet only in its tests.
 */
final class DemoFleet {
  private static final Logger LOG = LoggerFactory.getLogger(DemoFleet.class);
  static final String JAR = "warmmetal-fleet.jar";

  /** The simulated machines' hardware: 16 CPUs, 64 GiB (shape x86-16c-64g). */
  static final int CPUS = 16;

  static final int MEMORY_GIB = 64;
  private static final int TOKEN_SECONDS = 3600;

  private final Process process;
  private volatile boolean stopping;

  private DemoFleet(Process process) {
    this.process = process;
  }

  static String shape() {
    return ShapeNamer.name(
        new JsonObject()
            .put("cpus", CPUS)
            .put("memoryMiB", MEMORY_GIB * 1024L)
            .put("arch", "x86_64"));
  }

  /** Starts the fleet if the configuration asks for one (else a completed future holding null). */
  static Future<DemoFleet> start(
      Vertx vertx, ApiConfig config, EnrollmentTokens tokens, int agentPort, CaPin pin) {
    int machines = config.demoMachines();
    if (machines == 0) {
      return Future.succeededFuture();
    }
    Path dir = config.dataDir().resolve("demo");
    return vertx
        .executeBlocking(
            () ->
                BuiltJar.locate(config.fleetJar(), "fleet", JAR)
                    .orElseThrow(
                        () ->
                            new IllegalStateException(
                                "--demo needs the fleet simulator's jar: build it (mvn -B -DskipTests "
                                    + "package) or set WARMMETAL_FLEET_JAR"
                                    + config
                                        .fleetJar()
                                        .map(p -> " (" + p + " is no file)")
                                        .orElse(""))),
            false)
        .compose(
            jar ->
                tokens
                    .create(machines, TOKEN_SECONDS, new JsonObject(), false)
                    .compose(
                        token ->
                            vertx.executeBlocking(
                                () -> {
                                  Files.createDirectories(dir);
                                  Path tokenFile =
                                      writeSecret(
                                          dir.resolve("enrollment-token"),
                                          token.getString("token"));
                                  List<String> command =
                                      List.of(
                                          java(),
                                          "-Xmx256m",
                                          "-XX:+UseSerialGC",
                                          "-jar",
                                          jar.toString(),
                                          "--api",
                                          "https://"
                                              + loopbackOr(config.agentHost())
                                              + ":"
                                              + agentPort,
                                          "--ca-pin",
                                          pin.value(),
                                          "--token-file",
                                          tokenFile.toString(),
                                          "--state-dir",
                                          dir.resolve("fleet").toString(),
                                          "--shape",
                                          CPUS + ":" + MEMORY_GIB + "=" + machines,
                                          "--name-prefix",
                                          "demo",
                                          "--exit-with-parent");
                                  return launch(command, dir.resolve("fleet.log"));
                                },
                                false)))
        .onSuccess(
            fleet ->
                LOG.info(
                    "Demo: the fleet simulator runs {} simulated machines of shape {} (pid "
                        + "{}, log {}). Machines no pool asks for wait in standby; to keep two warm: "
                        + "warmmetal pools set {} --min-warm 2 --max-warm {}",
                    machines,
                    shape(),
                    fleet.process.pid(),
                    dir.resolve("fleet.log"),
                    shape(),
                    machines));
  }

  private static DemoFleet launch(List<String> command, Path log) throws IOException {
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    // The fleet needs none of the API's settings, and must not see its secrets (database URL, admin
    // token, key).
    Map<String, String> env = builder.environment();
    env.keySet()
        .removeIf(name -> name.startsWith("WARMMETAL_") && !name.startsWith("WARMMETAL_LOG"));
    DemoFleet fleet = new DemoFleet(builder.start());
    fleet
        .process
        .onExit()
        .thenAccept(
            p -> {
              if (!fleet.stopping) {
                LOG.warn(
                    "The demo fleet (pid {}) exited with status {}: see {}",
                    p.pid(),
                    p.exitValue(),
                    log);
              }
            });
    return fleet;
  }

  /** Stops the fleet: its agents' connections close with it. */
  Future<Void> stop(Vertx vertx) {
    stopping = true;
    return vertx.executeBlocking(
        () -> {
          process.destroy();
          if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
          }
          return null;
        },
        false);
  }

  /**
   * Where the fleet reaches the agent port: loopback if it listens on every interface, else its
   * address.
   */
  static String loopbackOr(String host) {
    if (host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
      return "127.0.0.1";
    }
    return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
  }

  /** The same JVM the API runs on. */
  private static String java() {
    return ProcessHandle.current()
        .info()
        .command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
  }

  /**
   * Writes a 0600 file through a temporary one, so the secret is never readable by others, not even
   * briefly.
   */
  private static Path writeSecret(Path file, String secret) throws IOException {
    Path part = file.resolveSibling(file.getFileName() + ".part");
    Files.deleteIfExists(part);
    Files.createFile(
        part, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(part, secret + "\n");
    return Files.move(
        part, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
