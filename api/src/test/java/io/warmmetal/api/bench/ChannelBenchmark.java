package io.warmmetal.api.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.commands.Outcome;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.api.WarmMetalApi;
import io.warmmetal.api.config.ApiConfig;
import io.warmmetal.api.enrollment.AgentProcessTest;
import io.warmmetal.api.testing.TestEnv;
import io.warmmetal.fleet.SimulatedAgent;
import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.commands.CommandKind;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;

/**
 * The push channel: (1) with N connected simulated agents (in this JVM), the time from {@code POST
 * /v1/instances} returning to the agent receiving its join command, p50/p99; (2) the API's memory
 * per connected agent, with the agents in a separate process ({@code warmmetal-fleet.jar}) so that
 * only the API's memory is counted. Prints numbers; asserts nothing.
 *
 * <pre>mvn -B -q install -DskipTests && mvn -B -q -pl api exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.warmmetal.api.bench.ChannelBenchmark -Dexec.args="1000 2000"</pre>
 *
 * Arguments: agents for the latency run (default 1000), agents for the memory run (default 2000).
 */
public final class ChannelBenchmark {
  private static final String ADMIN = "bench-admin-token-0123456789abcdef";
  private static final String SHAPE = "x86-16c-64g";

  public static void main(String[] args) {
    try {
      run(args);
      System.exit(0);
    } catch (Throwable e) {
      e.printStackTrace();
      System.exit(1);
    }
  }

  private static void run(String[] args) throws Exception {
    int agents = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    int memoryAgents = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
    Vertx vertx = Vertx.vertx();
    WarmMetalApi api = WarmMetalApi.start(vertx, config()).await();
    WebClient http =
        WebClient.create(
            vertx,
            new WebClientOptions().setKeepAlive(true),
            new PoolOptions().setHttp1MaxSize(64));
    latency(vertx, api, http, agents);
    api.stop().await();

    WarmMetalApi fresh = WarmMetalApi.start(vertx, config()).await();
    memory(vertx, fresh, WebClient.create(vertx), memoryAgents);
    fresh.stop().await();
    vertx.close();
  }

  private static ApiConfig config() throws Exception {
    return TestEnv.benchmark(ADMIN);
  }

  private static void latency(Vertx vertx, WarmMetalApi api, WebClient http, int count)
      throws Exception {
    URI port = URI.create("https://127.0.0.1:" + api.agentPort());
    Enrollment enrollment = new Enrollment(vertx, port, api.caPin());
    WebSocketClient ws =
        vertx.createWebSocketClient(
            new WebSocketClientOptions().setVerifyHost(false).setMaxConnections(100_000));
    String token = token(http, api, count);
    Map<String, Long> joinReceived = new ConcurrentHashMap<>();
    Executor executor =
        (Command command, BiConsumer<String, String> progress) -> {
          if (command.kind() == CommandKind.JOIN) {
            joinReceived.put(command.instanceId(), System.nanoTime());
          }
          return Future.succeededFuture(Outcome.ok("instant"));
        };
    long t0 = System.nanoTime();
    List<Future<SimulatedAgent>> started = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      JsonObject machine =
          new JsonObject()
              .put("name", "bench-" + i)
              .put(
                  "facts",
                  new JsonObject().put("cpus", 16).put("memoryMiB", 65536).put("arch", "x86_64"))
              .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
      started.add(
          SimulatedAgent.start(
              vertx,
              enrollment,
              ws,
              port,
              token,
              machine,
              Files.createTempDirectory("bench-agent"),
              executor));
      if (started.size() % 50 == 0) {
        Future.all(started.subList(started.size() - 50, started.size())).await();
      }
    }
    Future.all(started).await();
    waitFor(() -> api.channel().connectedAgents() == count, 120);
    System.out.printf(
        "%d agents enrolled and connected in %.1f s%n", count, (System.nanoTime() - t0) / 1e9);

    http.put(api.port(), "127.0.0.1", "/v1/pools/" + SHAPE)
        .putHeader("Authorization", "Bearer " + ADMIN)
        .sendJsonObject(new JsonObject().put("minWarm", count).put("maxWarm", count))
        .await();
    waitFor(() -> warm(http, api) == count, 120);

    int launches = count;
    long[] latency = new long[launches];
    List<String> ids = new ArrayList<>();
    Map<String, Long> returned = new ConcurrentHashMap<>();
    for (int i = 0; i < launches; i++) {
      var r =
          http.post(api.port(), "127.0.0.1", "/v1/instances")
              .putHeader("Authorization", "Bearer " + ADMIN)
              .sendJsonObject(new JsonObject().put("shape", SHAPE))
              .await();
      long at = System.nanoTime();
      String id = r.bodyAsJsonObject().getJsonArray("instances").getJsonObject(0).getString("id");
      returned.put(id, at);
      ids.add(id);
    }
    waitFor(() -> joinReceived.keySet().containsAll(ids), 60);
    for (int i = 0; i < launches; i++) {
      latency[i] = Math.max(0, joinReceived.get(ids.get(i)) - returned.get(ids.get(i)));
    }
    Arrays.sort(latency);
    System.out.println();
    System.out.println(
        "| connected agents | launches | join received after POST returned: p50 ms | p99 ms | max ms |");
    System.out.println("|---|---|---|---|---|");
    System.out.printf(
        "| %d | %d | %.2f | %.2f | %.2f |%n",
        count, launches, pct(latency, 50), pct(latency, 99), latency[latency.length - 1] / 1e6);
    System.out.println("(a push that arrives before the HTTP response is counted as 0)");
    for (Future<SimulatedAgent> a : started) {
      a.result().stop();
    }
  }

  private static void memory(Vertx vertx, WarmMetalApi api, WebClient http, int count)
      throws Exception {
    Path jar = AgentProcessTest.moduleJar("fleet");
    Path tokenFile = Files.createTempFile("token", "");
    Files.writeString(tokenFile, token(http, api, count));
    long before = usedAfterGc();
    Process fleet =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx2g",
                "-jar",
                jar.toString(),
                "--api",
                "https://127.0.0.1:" + api.agentPort(),
                "--ca-pin",
                api.caPin().value(),
                "--token-file",
                tokenFile.toString(),
                "--state-dir",
                Files.createTempDirectory("fleet").toString(),
                "--shape",
                "16:64=" + count,
                "--durations",
                "prepare=fixed:0s,join=fixed:0s,reset=fixed:0s,reboot=fixed:0s")
            .redirectErrorStream(true)
            .redirectOutput(Files.createTempFile("fleet", ".log").toFile())
            .start();
    try {
      waitFor(() -> api.channel().connectedAgents() == count, 300);
      Thread.sleep(3000); // let enrollment garbage settle
      long after = usedAfterGc();
      System.out.println();
      System.out.println(
          "| connected agents (another process) | API heap before | after | per agent |");
      System.out.println("|---|---|---|---|");
      System.out.printf(
          "| %d | %.1f MiB | %.1f MiB | %.1f KiB |%n",
          count, before / 1048576.0, after / 1048576.0, (after - before) / 1024.0 / count);
      System.out.printf(
          "(heap after GC; at that rate 10,000 agents take %.0f MiB of heap)%n",
          (after - before) * 10_000.0 / count / 1048576.0);
    } finally {
      fleet.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  private static long usedAfterGc() throws InterruptedException {
    for (int i = 0; i < 4; i++) {
      System.gc();
      Thread.sleep(200);
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  private static String token(WebClient http, WarmMetalApi api, int uses) {
    return http.post(api.port(), "127.0.0.1", "/v1/enrollment-tokens")
        .putHeader("Authorization", "Bearer " + ADMIN)
        .sendJsonObject(new JsonObject().put("uses", uses))
        .await()
        .bodyAsJsonObject()
        .getString("token");
  }

  private static long warm(WebClient http, WarmMetalApi api) {
    return http.get(api.port(), "127.0.0.1", "/v1/pools/" + SHAPE)
        .putHeader("Authorization", "Bearer " + ADMIN)
        .send()
        .await()
        .bodyAsJsonObject()
        .getLong("warm");
  }

  private static double pct(long[] sorted, double p) {
    int idx = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(idx, sorted.length - 1))] / 1e6;
  }

  private static void waitFor(BooleanSupplier done, int seconds) throws InterruptedException {
    long deadline = System.currentTimeMillis() + seconds * 1000L;
    while (!done.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("the benchmark timed out waiting");
      }
      Thread.sleep(50);
    }
  }
}
