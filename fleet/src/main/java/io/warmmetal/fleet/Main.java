package io.warmmetal.fleet;

import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.JdkSSLEngineOptions;
import io.warmmetal.agent.ApiTrust;
import io.warmmetal.agent.SimulationOptions;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.fleet.kubelet.SimulatedKubelet;
import io.warmmetal.fleet.kubelet.SimulatedNodes;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code java -jar warmmetal-fleet.jar --shape 16:64=300 --shape 64:512:4:H100=200 …}: many
 * simulated servers in one JVM, each with its own key, certificate, state directory and connection.
 * Their identities derive from their index, so a restarted fleet gets its machines back.
 */
@Command(
    name = "warmmetal-fleet",
    mixinStandardHelpOptions = true,
    version = "WarmMetal fleet simulator 0.1.0",
    description = "Run many simulated agents in one JVM (for tests, demos and benchmarks).")
public final class Main implements Callable<Integer> {
  @Option(names = "--api", required = true, description = "the API's agent port")
  String api;

  @Mixin ApiTrust trust = new ApiTrust();

  @Option(
      names = "--token-file",
      required = true,
      description = "an enrollment token with enough uses")
  Path tokenFile;

  @Option(
      names = "--state-dir",
      required = true,
      description = "one subdirectory per simulated agent goes here")
  Path stateDir;

  @Option(
      names = "--shape",
      required = true,
      description =
          "cpus:memoryGiB[:gpus:model]=count, repeatable; e.g. 16:64=300 or 64:512:4:H100=20")
  List<String> shapes;

  @Option(
      names = "--name-prefix",
      defaultValue = "sim",
      description = "machine names are <prefix>-<index>")
  String prefix;

  @Mixin SimulationOptions simulation = new SimulationOptions();

  @Option(
      names = "--kubeconfig",
      description = "also act as kubelets: each agent registers a Node in this cluster")
  Path kubeconfig;

  @Option(
      names = "--runs-file",
      description =
          "append a line per command an agent starts (epoch microseconds,"
              + " command id, kind, instance id): for benchmarks counting runs and timing pushes from another process")
  Path runsFile;

  @Option(
      names = "--exit-with-parent",
      description =
          "exit when the process that started this one ends (the API's"
              + " --demo starts the fleet so: killed, it leaves no simulated machines behind)")
  boolean exitWithParent;

  public static void main(String[] args) {
    io.warmmetal.agent.Main.useAgentLogging();
    System.exit(new CommandLine(new Main()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    Logger log = LoggerFactory.getLogger(Main.class);
    if (exitWithParent) {
      exitWithParent(log);
    }
    Vertx vertx = Vertx.vertx(new VertxOptions().setWorkerPoolSize(8));
    URI uri = URI.create(api);
    Enrollment enrollment = new Enrollment(vertx, uri, trust.pin());
    // Thousands of agents do their TLS handshakes on this process's few cores, where a real agent
    // has its own CPU:
    // their crypto on the worker pool as well as the event loops, and a minute for a handshake
    // rather than Vert.x's
    // 10 s, so that a burst of reconnections (their replica died) is not timed out here and started
    // over.
    WebSocketClient ws =
        vertx.createWebSocketClient(
            new WebSocketClientOptions()
                .setVerifyHost(false)
                .setMaxConnections(1_000_000)
                .setSslEngineOptions(new JdkSSLEngineOptions().setUseWorkerThread(true))
                .setSslHandshakeTimeout(60)
                .setSslHandshakeTimeoutUnit(TimeUnit.SECONDS));
    List<Context> eventLoops = eventLoops(vertx);
    String token = Files.readString(tokenFile).trim();
    // One client, one pod watch and one heartbeat timer for all the simulated kubelets.
    SimulatedNodes nodes = kubeconfig == null ? null : SimulatedNodes.connect(kubeconfig);
    RunsLog runs = runsFile == null ? null : RunsLog.open(runsFile);
    List<Future<SimulatedAgent>> started = new ArrayList<>();
    int index = 0;
    for (String spec : shapes) {
      String[] sc = spec.split("=", 2);
      JsonObject facts = facts(sc[0]);
      for (int i = 0; i < Integer.parseInt(sc[1]); i++, index++) {
        String name = prefix + "-" + index;
        JsonObject machine =
            new JsonObject()
                .put("name", name)
                .put("facts", facts)
                .put(
                    "identity",
                    new JsonObject()
                        .put(
                            "systemUuid",
                            UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8))
                                .toString()));
        Executor executor = simulation.executor(vertx, new Random(index));
        if (nodes != null) {
          executor = new SimulatedKubelet(vertx, executor, nodes, name, facts);
        }
        if (runs != null) {
          executor = runs.recording(executor);
        }
        Promise<SimulatedAgent> agent = Promise.promise();
        Executor its = executor;
        eventLoops
            .get(index % eventLoops.size())
            .runOnContext(
                v ->
                    SimulatedAgent.start(
                            vertx, enrollment, ws, uri, token, machine, stateDir.resolve(name), its)
                        .onComplete(agent));
        started.add(agent.future());
      }
    }
    Future.join(started).await();
    long failed = started.stream().filter(Future::failed).count();
    log.info("Fleet up: {} simulated agents ({} failed to start)", started.size() - failed, failed);
    started.stream()
        .filter(Future::failed)
        .findFirst()
        .ifPresent(f -> log.error("First failure: {}", f.cause().getMessage()));
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(stopped::countDown));
    stopped.await();
    return failed == 0 ? 0 : 1;
  }

  private static void exitWithParent(Logger log) {
    ProcessHandle parent =
        ProcessHandle.current()
            .parent()
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "--exit-with-parent: the parent process has already ended"));
    parent
        .onExit()
        .thenRun(
            () -> {
              log.info("The parent process {} ended: the fleet stops", parent.pid());
              System.exit(0);
            });
  }

  /**
   * A context on each event loop, to spread the agents (their connections live on the loop that
   * opened them): started from this one thread, every agent would share one loop.
   */
  private static List<Context> eventLoops(Vertx vertx) {
    List<Context> contexts = new CopyOnWriteArrayList<>();
    vertx
        .deployVerticle(
            () ->
                new VerticleBase() {
                  @Override
                  public Future<?> start() {
                    contexts.add(context);
                    return Future.succeededFuture();
                  }
                },
            new DeploymentOptions().setInstances(VertxOptions.DEFAULT_EVENT_LOOP_POOL_SIZE))
        .await();
    return contexts;
  }

  /** {@code cpus:memoryGiB[:gpus:model]}. */
  static JsonObject facts(String spec) {
    String[] p = spec.split(":");
    JsonObject facts =
        new JsonObject()
            .put("cpus", Integer.parseInt(p[0]))
            .put("memoryMiB", Long.parseLong(p[1]) * 1024)
            .put("arch", "x86_64");
    if (p.length == 4) {
      JsonArray gpus = new JsonArray();
      for (int g = 0; g < Integer.parseInt(p[2]); g++) {
        gpus.add(new JsonObject().put("model", p[3]));
      }
      facts.put("gpus", gpus);
    }
    return facts;
  }
}
