package io.warmmetal.api.bench;

import static io.warmmetal.api.testing.ApiProcess.count;
import static io.warmmetal.api.testing.ApiProcess.rows;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.api.testing.ApiProcess;
import io.warmmetal.api.testing.TestDatabase;
import io.warmmetal.fleet.Main;
import io.warmmetal.protocol.testing.Await;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The load held, measured live: N simulated agents (10,000 by default) in fleet-simulator processes
 * ({@code io.warmmetal.fleet.Main}, what {@code warmmetal-fleet.jar} runs), connected through a
 * loopback TCP proxy (their load balancer) to one API replica — a JVM of its own, as operators run
 * it — with a second replica idle on the same database. It prints the enrollment time and the
 * connected count; the replica's heap after a full GC ({@code jcmd GC.run}, {@code GC.heap_info})
 * and its resident memory with every agent connected and warm; push latency with them connected
 * ({@code POST /v1/instances} returned → the agent starts its join, from the fleets' runs logs, one
 * launch after another) through the replica holding the channels and through the other one (its
 * NOTIFY hop); then a storm of launches through both in which the first replica is killed -9: the
 * answers lost are retried on the survivor with their client tokens, every agent reconnects to it,
 * and every command issued must have run exactly once (the fleets' runs logs against the database)
 * with none left open, every instance running. It asserts nothing beyond that sanity: a broken
 * check stops it, naming what broke.
 *
 * <pre>
 * ulimit -n 20000; mvn -B -q install -DskipTests && mvn -B -q -pl api exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.warmmetal.api.bench.FleetLoadBenchmark -Dexec.args="10000 2 1000 2000"
 * </pre>
 *
 * Arguments: agents (10000), fleet processes (2; each runs agents/fleets, with a proxy process of
 * its own), launches timed one at a time through the replica holding the channels (1000; a fifth as
 * many through the other), launches in the storm the kill interrupts (2000). {@code
 * -Dwarmmetal.bench.apiJvm} ("-Xmx1536m": 75 % of the 2 GiB the manifests give a replica, as the
 * image's MaxRAMPercentage) and {@code -Dwarmmetal.bench.fleetJvm} ("-Xmx3g") are the JVM options.
 * Every {@code WARMMETAL_*} variable set where it runs goes to the replicas (a connection cap, the
 * pool size); unless set there, the benchmark lifts the agent port's caps on connections (per
 * address and in total), which every simulated agent, all from loopback, would otherwise meet, and
 * its TLS handshake timeout, since the agents' side of each handshake runs on the same cores.
 *
 * <p>File descriptors: an agent is a socket and a lock file in its fleet process, two sockets in
 * its proxy and one in the replica holding it, so each of those processes needs agents/fleets × 2
 * (the replica: agents) below its {@code ulimit -n}.
 */
public final class FleetLoadBenchmark {
  private static final String ADMIN = "bench-admin-token-0123456789abcdef";
  private static final String SHAPE = "x86-16c-64g";
  private static final Pattern CONNECTED =
      Pattern.compile("(?m)^warmmetal_agents_connected(?:\\{[^}]*})? (\\S+)");
  private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");
  private static final Pattern RSS = Pattern.compile("(?m)^VmRSS:\\s+(\\d+) kB");

  private final List<Process> children = new ArrayList<>();

  /** Launches answered 503 (and sent again after their Retry-After). */
  private final AtomicInteger unavailable = new AtomicInteger();

  private Vertx vertx;
  private final Map<String, Long> lastConnected = new ConcurrentHashMap<>();
  private final List<Path> scratch = new ArrayList<>();
  private WebClient http;

  public static void main(String[] args) {
    FleetLoadBenchmark bench = new FleetLoadBenchmark();
    Runtime.getRuntime().addShutdownHook(new Thread(bench::stopChildren));
    try {
      bench.run(args);
      System.exit(0);
    } catch (Throwable e) {
      e.printStackTrace();
      System.exit(1);
    }
  }

  private void run(String[] args) throws Exception {
    int agents = arg(args, 0, 10_000);
    int fleets = arg(args, 1, 2);
    int latencyLaunches = arg(args, 2, 1000);
    int stormLaunches = arg(args, 3, 2000);
    System.out.printf(
        "%d agents in %d fleet processes on %d cores; open files per process at most %s; load %s%n",
        agents, fleets, Runtime.getRuntime().availableProcessors(), openFileLimit(), load());

    vertx = Vertx.vertx();
    http =
        WebClient.create(
            vertx,
            new WebClientOptions().setKeepAlive(true),
            new PoolOptions().setHttp1MaxSize(64));
    String db = TestDatabase.freshDatabaseUrl();
    Path data = temporary(Files.createTempDirectory("warmmetal-fleet-load"));
    CertificateAuthority ca =
        CertificateAuthority.loadOrCreate(data, Optional.empty(), Optional.empty());
    List<String> apiJvm =
        List.of(System.getProperty("warmmetal.bench.apiJvm", "-Xmx1536m").trim().split("\\s+"));
    try (ApiProcess a = ApiProcess.start("replica-a", settings(db, data, agents), apiJvm);
        ApiProcess b = ApiProcess.start("replica-b", settings(db, data, agents), apiJvm);
        Connection sql = ApiProcess.jdbc(db)) {
      System.out.printf(
          "replicas A (pid %d) and B (pid %d), JVM %s; logs %s, %s%n",
          a.pid(), b.pid(), apiJvm, a.log, b.log);
      Memory idle = memory(a);

      // Enrollment: every agent enrolls (a key, a certificate signed by the API) and connects,
      // through its proxy.
      Path tokenFile = temporary(Files.createTempFile("enrollment", ".token"));
      Files.writeString(
          tokenFile,
          admin(HttpMethod.POST, a, "/v1/enrollment-tokens", new JsonObject().put("uses", agents))
              .bodyAsJsonObject()
              .getString("token"));
      Runs runs = new Runs();
      List<Process> fleetProcesses = new ArrayList<>();
      long started = System.nanoTime();
      for (int f = 0; f < fleets; f++) {
        int share = agents / fleets + (f < agents % fleets ? 1 : 0);
        int proxy = proxy(a, b);
        fleetProcesses.add(fleet(f, share, proxy, ca, tokenFile, runs));
      }
      int held = awaitAgents("connected to A", agents, started, () -> connected(a), fleetProcesses);
      double enrolled = (System.nanoTime() - started) / 1e9;
      System.out.printf(
          "%nenrolled and connected: %d of %d agents to A in %.0f s (%.0f/s); %d machines recorded;"
              + " load %s%n",
          held,
          agents,
          enrolled,
          held / enrolled,
          count(sql, "SELECT count(*) FROM machines"),
          load());
      if (held < agents) {
        System.out.printf(
            "NOT HELD: %d agents did not connect (fleet logs: %s)%n",
            agents - held, fleetProcesses.stream().map(p -> "pid " + p.pid()).toList());
      }

      // Warm: the pool manager prepares every machine (simulated, 0 s) through its agent.
      long warming = System.nanoTime();
      admin(
          HttpMethod.PUT,
          a,
          "/v1/pools/" + SHAPE,
          new JsonObject().put("minWarm", held).put("maxWarm", held));
      awaitAgents(
          "warm",
          held,
          warming,
          () -> count(sql, "SELECT count(*) FROM machines WHERE state = 'warm'"),
          fleetProcesses);
      System.out.printf(
          "all %d prepared and warm in %.0f s%n", held, (System.nanoTime() - warming) / 1e9);

      Memory loaded = memory(a);
      System.out.println();
      System.out.println(
          "| connected agents (other processes) | replica heap after GC: idle → connected | per agent"
              + " | resident memory: idle → connected |");
      System.out.println("|---|---|---|---|");
      System.out.printf(
          "| %,d on A | %.0f → %.0f MiB | %.1f KiB | %.0f → %.0f MiB |%n",
          held,
          mib(idle.heap()),
          mib(loaded.heap()),
          (loaded.heap() - idle.heap()) / 1024.0 / held,
          mib(idle.rss()),
          mib(loaded.rss()));

      // Push latency, one launch at a time, with every agent connected.
      System.out.println();
      System.out.println(
          "| connected agents | launches through | launches | POST returned → join started: p50 ms"
              + " | p99 ms | max ms |");
      System.out.println("|---|---|---|---|---|---|");
      pushLatency(a, "A (holds the channels)", held, latencyLaunches, "latency-a-", runs);
      pushLatency(b, "B (NOTIFY to A)", held, Math.max(1, latencyLaunches / 5), "latency-b-", runs);
      System.out.printf(
          "(a push that arrives before the HTTP response is counted as 0; load %s)%n", load());

      killUnderLoad(a, b, sql, runs, held, stormLaunches, fleetProcesses);
      Memory survivor = memory(b);
      System.out.printf(
          "%nB after the takeover, %,d agents connected: heap after GC %.0f MiB, resident %.0f MiB;"
              + " load %s%n",
          connected(b), mib(survivor.heap()), mib(survivor.rss()), load());
    } finally {
      stopChildren();
      vertx.close();
      scratch.forEach(FleetLoadBenchmark::deleteTree);
    }
  }

  /**
   * The replicas' settings: the environment's WARMMETAL_* (not the tests'), the database, CA,
   * token, agent caps.
   */
  private static Map<String, String> settings(String db, Path data, int agents) {
    Map<String, String> env = new HashMap<>();
    System.getenv()
        .forEach(
            (k, v) -> {
              if (k.startsWith("WARMMETAL_") && !k.startsWith("WARMMETAL_TEST_")) {
                env.put(k, v);
              }
            });
    env.put("WARMMETAL_DATABASE_URL", db);
    env.put("WARMMETAL_DATA_DIR", data.toString());
    env.put("WARMMETAL_ADMIN_TOKEN", ADMIN);
    // Every simulated agent connects from 127.0.0.1, all at once: the agent port's per-address cap
    // (for connections
    // without a certificate yet) is for real fleets behind many addresses; its total must hold
    // every agent.
    env.putIfAbsent("WARMMETAL_AGENT_MAX_CONNECTIONS_PER_ADDRESS", "1000000");
    env.putIfAbsent(
        "WARMMETAL_AGENT_MAX_CONNECTIONS", String.valueOf(Math.max(12_288, agents + agents / 4)));
    // Here the agents' side of every TLS handshake runs on the same two cores as the replica's: a
    // takeover's
    // handshakes take minutes, not the seconds they take with each agent on its own server.
    env.putIfAbsent("WARMMETAL_AGENT_HANDSHAKE_TIMEOUT_SECONDS", "300");
    return env;
  }

  /** A proxy process in front of A's and B's agent ports (A first); its port. */
  private int proxy(ApiProcess a, ApiProcess b) throws IOException {
    Process proxy =
        child(
            new ProcessBuilder(
                    ApiProcess.java(),
                    "-Xmx512m",
                    "-cp",
                    ApiProcess.classpath(),
                    AgentPortProxy.class.getName(),
                    String.valueOf(a.agentPort),
                    String.valueOf(b.agentPort))
                .redirectError(ProcessBuilder.Redirect.INHERIT));
    BufferedReader out =
        new BufferedReader(new InputStreamReader(proxy.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine();
    if (line == null || !line.startsWith("listening ")) {
      throw new IllegalStateException("the proxy did not start: " + line);
    }
    return Integer.parseInt(line.substring("listening ".length()));
  }

  /**
   * A fleet process of {@code agents} simulated agents with commands that take no time, logging
   * every run.
   */
  private Process fleet(
      int index, int agents, int proxyPort, CertificateAuthority ca, Path tokenFile, Runs runs)
      throws IOException {
    Path state = temporary(Files.createTempDirectory("fleet-" + index));
    Path runsFile = state.resolve("runs.log");
    Files.createFile(runsFile);
    runs.add(runsFile);
    Path log = Files.createTempFile("warmmetal-fleet-" + index, ".log");
    List<String> command = new ArrayList<>(List.of(ApiProcess.java()));
    command.addAll(
        List.of(System.getProperty("warmmetal.bench.fleetJvm", "-Xmx3g").trim().split("\\s+")));
    command.addAll(
        List.of(
            "-cp",
            ApiProcess.classpath(),
            Main.class.getName(),
            "--api",
            "https://127.0.0.1:" + proxyPort,
            "--ca-pin",
            ca.pin().value(),
            "--token-file",
            tokenFile.toString(),
            "--state-dir",
            state.resolve("agents").toString(),
            "--shape",
            "16:64=" + agents,
            "--name-prefix",
            "f" + index,
            "--durations",
            "prepare=fixed:0s,join=fixed:0s,reset=fixed:0s,reboot=fixed:0s",
            "--runs-file",
            runsFile.toString()));
    Process fleet =
        child(new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()));
    System.out.printf(
        "fleet %d: %d agents, pid %d, proxy port %d, log %s%n",
        index, agents, fleet.pid(), proxyPort, log);
    return fleet;
  }

  /**
   * Waits until {@code count} reaches {@code target}, printing progress; gives up when it has not
   * grown for three minutes (or a fleet process died) and returns what it reached.
   */
  private static int awaitAgents(
      String what, int target, long since, LongSupplier count, List<Process> fleets)
      throws InterruptedException {
    return awaitAgents(what, target, since, count, fleets, Duration.ofMinutes(3), () -> "");
  }

  /**
   * As above, giving up after {@code stall} without growth, each progress line also saying {@code
   * detail} (what the database is doing, say).
   */
  private static int awaitAgents(
      String what,
      int target,
      long since,
      LongSupplier count,
      List<Process> fleets,
      Duration stall,
      Supplier<String> detail)
      throws InterruptedException {
    long last = -1;
    long grewAt = System.nanoTime();
    long reportAt = System.nanoTime();
    while (true) {
      long now = count.getAsLong();
      if (now >= target) {
        return (int) now;
      }
      if (now > last) {
        last = now;
        grewAt = System.nanoTime();
      }
      Optional<Process> dead = fleets.stream().filter(p -> !p.isAlive()).findFirst();
      if (dead.isPresent() || System.nanoTime() - grewAt > stall.toNanos()) {
        System.out.printf(
            "stopped waiting: %d of %d %s (%s)%n",
            now,
            target,
            what,
            dead.isPresent()
                ? "fleet process " + dead.get().pid() + " exited with " + dead.get().exitValue()
                : "no progress in " + stall.toMinutes() + " min");
        return (int) now;
      }
      if (System.nanoTime() - reportAt > TimeUnit.SECONDS.toNanos(10)) {
        reportAt = System.nanoTime();
        System.out.printf(
            "  %4.0f s: %,d %s; load %s%s%n",
            (reportAt - since) / 1e9, now, what, load(), detail.get());
      }
      Thread.sleep(500);
    }
  }

  /**
   * Launches one at a time through {@code via}; each join's start in the runs logs, less the
   * answer's arrival.
   */
  private void pushLatency(
      ApiProcess via, String label, int connected, int launches, String tokens, Runs runs)
      throws Exception {
    Map<String, Long> returned = new HashMap<>();
    for (int i = 0; i < launches; i++) {
      HttpResponse<Buffer> r = launch(via, tokens + i).await();
      long at = nowMicros();
      expect(r, 201);
      returned.put(
          r.bodyAsJsonObject().getJsonArray("instances").getJsonObject(0).getString("id"), at);
    }
    Await.until(
        "every join of " + label + " started",
        () -> runs.poll().joinStarted.keySet().containsAll(returned.keySet()),
        120 * 1000L);
    long[] micros =
        returned.entrySet().stream()
            .mapToLong(e -> Math.max(0, runs.joinStarted.get(e.getKey()) - e.getValue()))
            .sorted()
            .toArray();
    System.out.printf(
        "| %,d | %s | %d | %.1f | %.1f | %.1f |%n",
        connected,
        label,
        launches,
        pct(micros, 50),
        pct(micros, 99),
        micros[micros.length - 1] / 1000.0);
  }

  /**
   * A storm of launches with client tokens through both replicas, A killed -9 once a third have
   * answered; lost answers retried on B; then every agent back (on B), every instance running,
   * every command run exactly once.
   */
  private void killUnderLoad(
      ApiProcess a,
      ApiProcess b,
      Connection sql,
      Runs runs,
      int held,
      int launches,
      List<Process> fleets)
      throws Exception {
    long before = count(sql, "SELECT count(*) FROM instances");
    unavailable.set(0);
    AtomicInteger next = new AtomicInteger();
    AtomicInteger answered = new AtomicInteger();
    Map<String, Boolean> lost = new ConcurrentHashMap<>();
    List<Future<Void>> workers = new ArrayList<>();
    for (int w = 0; w < 32; w++) {
      workers.add(stormWorker(a, b, launches, next, answered, lost));
    }
    Await.until("a third answered", () -> answered.get() >= launches / 3, 300 * 1000L);
    long killedAt = System.nanoTime();
    a.kill();
    System.out.printf(
        "%nkilled A (kill -9) after %d of %d storm launches answered; %,d agents were on it; load %s%n",
        answered.get(), launches, held, load());
    Future.all(workers)
        .await(); // a lost connection is noted, any other failure stops the benchmark
    for (String token : lost.keySet()) {
      expect(
          launch(b, token).await(),
          200,
          201); // the same client token: the launch, not a second one
    }
    // Every handshake at once, interleaved: on a loaded machine none may finish for minutes, then
    // all of them do.
    int back =
        awaitAgents(
            "reconnected to B",
            held,
            killedAt,
            () -> connected(b),
            fleets,
            Duration.ofMinutes(10),
            () -> database(sql));
    double reconnected = (System.nanoTime() - killedAt) / 1e9;
    long expected = before + launches;
    Await.until(
        "every instance running",
        () -> count(sql, "SELECT count(*) FROM instances WHERE state = 'running'") == expected,
        600 * 1000L);
    double running = (System.nanoTime() - killedAt) / 1e9;
    Await.until(
        "no command left queued or delivered",
        () ->
            count(sql, "SELECT count(*) FROM commands WHERE status IN ('queued', 'delivered')")
                == 0,
        300 * 1000L);

    long instances = count(sql, "SELECT count(*) FROM instances");
    List<String> finished =
        rows(sql, "SELECT id FROM commands WHERE status IN ('succeeded', 'failed')");
    runs.poll();
    List<String> notOnce =
        finished.stream().filter(id -> runs.byCommand.getOrDefault(id, 0) != 1).toList();
    long twice = runs.byCommand.values().stream().filter(n -> n > 1).count();
    long joins =
        count(sql, "SELECT count(*) FROM commands WHERE type = 'join' AND status = 'succeeded'");
    System.out.println();
    System.out.println(
        "| agents | storm launches | answers lost with A, retried on B | 503s, sent again"
            + " | all agents on B after the kill | every instance running after the kill | commands finished"
            + " | run exactly once | run twice |");
    System.out.println("|---|---|---|---|---|---|---|---|---|");
    System.out.printf(
        "| %,d (%,d back on B) | %,d | %d | %d | %.0f s | %.0f s | %,d | %,d | %d |%n",
        held,
        back,
        launches,
        lost.size(),
        unavailable.get(),
        reconnected,
        running,
        finished.size(),
        finished.size() - notOnce.size(),
        twice);
    check(instances == expected, "instances: " + instances + ", launches: " + expected);
    check(joins == instances, "joins succeeded: " + joins + " for " + instances + " instances");
    check(
        notOnce.isEmpty(), "commands not run exactly once: " + notOnce.stream().limit(10).toList());
    check(twice == 0, twice + " commands ran twice");
    check(back == held, (held - back) + " agents did not come back");
  }

  /**
   * Sends the next storm launch until there is none: to A or B alternately while A lives, then to
   * B.
   */
  private Future<Void> stormWorker(
      ApiProcess a,
      ApiProcess b,
      int launches,
      AtomicInteger next,
      AtomicInteger answered,
      Map<String, Boolean> lost) {
    int i = next.getAndIncrement();
    if (i >= launches) {
      return Future.succeededFuture();
    }
    String token = "storm-" + i;
    ApiProcess via = i % 2 == 0 && a.alive() ? a : b;
    return launch(via, token)
        .transform(
            ar -> {
              if (ar.succeeded()
                  && (ar.result().statusCode() == 201 || ar.result().statusCode() == 200)) {
                answered.incrementAndGet();
              } else if (ar.failed()) {
                lost.put(
                    token,
                    true); // the connection died with A: launched or not, the retry will tell
              } else {
                return Future.failedFuture(
                    new IllegalStateException(
                        "storm launch "
                            + token
                            + ": "
                            + ar.result().statusCode()
                            + " "
                            + ar.result().bodyAsString()));
              }
              return stormWorker(a, b, launches, next, answered, lost);
            });
  }

  /**
   * A launch with a client token, sent again after a 503's Retry-After as a client would (each 503
   * counted).
   */
  private Future<HttpResponse<Buffer>> launch(ApiProcess via, String clientToken) {
    return http.request(HttpMethod.POST, via.httpPort, "127.0.0.1", "/v1/instances")
        .timeout(30_000)
        .putHeader("Authorization", "Bearer " + ADMIN)
        .sendJsonObject(new JsonObject().put("shape", SHAPE).put("clientToken", clientToken))
        .compose(
            r -> {
              if (r.statusCode() != 503) {
                return Future.succeededFuture(r);
              }
              unavailable.incrementAndGet();
              String after = r.getHeader("Retry-After");
              return vertx
                  .timer(after == null ? 1 : Long.parseLong(after), TimeUnit.SECONDS)
                  .compose(x -> launch(via, clientToken));
            });
  }

  private HttpResponse<Buffer> admin(
      HttpMethod method, ApiProcess via, String path, JsonObject body) {
    HttpResponse<Buffer> r =
        http.request(method, via.httpPort, "127.0.0.1", path)
            .putHeader("Authorization", "Bearer " + ADMIN)
            .sendJsonObject(body)
            .await();
    expect(r, 200, 201);
    return r;
  }

  /**
   * Agents holding a channel to {@code replica} now, from its management port's /metrics (or as
   * last read).
   */
  private long connected(ApiProcess replica) {
    try {
      String text =
          http.get(replica.metricsPort, "127.0.0.1", "/metrics")
              .timeout(15_000)
              .send()
              .await()
              .bodyAsString();
      Matcher m = CONNECTED.matcher(text);
      lastConnected.put(replica.name, m.find() ? (long) Double.parseDouble(m.group(1)) : 0);
    } catch (RuntimeException e) {
      System.out.printf("  (no answer from %s's /metrics: %s)%n", replica.name, e.getMessage());
    }
    return lastConnected.getOrDefault(replica.name, 0L);
  }

  /** The database's sessions by state and wait, and its oldest transaction: where a stall waits. */
  private static String database(Connection sql) {
    List<String> sessions =
        rows(
            sql,
            """
        SELECT coalesce(state, '?') || coalesce('/' || wait_event, '') || ' ' || count(*) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() GROUP BY state, wait_event ORDER BY 1""");
    List<String> oldest =
        rows(
            sql,
            """
        SELECT round(extract(epoch FROM now() - xact_start))::text || ' s: '
          || left(regexp_replace(query, '\\s+', ' ', 'g'), 80)
        FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
          AND xact_start IS NOT NULL ORDER BY xact_start LIMIT 1""");
    return "; database: "
        + String.join(", ", sessions)
        + (oldest.isEmpty() ? "" : "; oldest transaction " + oldest.get(0));
  }

  /** Heap after a full GC (jcmd GC.run, then GC.heap_info) and resident memory of a replica. */
  private record Memory(long heap, long rss) {}

  private static Memory memory(ApiProcess replica) throws Exception {
    jcmd(replica.pid(), "GC.run");
    jcmd(replica.pid(), "GC.run"); // a second pass for what the first only queued for finalization
    Matcher heap = HEAP_USED.matcher(jcmd(replica.pid(), "GC.heap_info"));
    Matcher rss =
        RSS.matcher(Files.readString(Path.of("/proc", String.valueOf(replica.pid()), "status")));
    if (!heap.find() || !rss.find()) {
      throw new IllegalStateException("cannot read the heap or resident memory of " + replica.name);
    }
    return new Memory(Long.parseLong(heap.group(1)) * 1024, Long.parseLong(rss.group(1)) * 1024);
  }

  private static String jcmd(long pid, String command) throws Exception {
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                String.valueOf(pid),
                command)
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IllegalStateException("jcmd " + pid + " " + command + ": " + out);
    }
    return out;
  }

  /**
   * The fleets' runs logs, read on as they grow: runs per command id, and when each instance's join
   * started.
   */
  private static final class Runs {
    private final List<Path> files = new ArrayList<>();
    private final List<Long> offsets = new ArrayList<>();
    final Map<String, Integer> byCommand = new HashMap<>();
    final Map<String, Long> joinStarted = new HashMap<>();

    synchronized void add(Path file) {
      files.add(file);
      offsets.add(0L);
    }

    /** Reads the complete lines written since the last poll. */
    synchronized Runs poll() {
      for (int f = 0; f < files.size(); f++) {
        try (RandomAccessFile in = new RandomAccessFile(files.get(f).toFile(), "r")) {
          byte[] fresh = new byte[(int) (in.length() - offsets.get(f))];
          in.seek(offsets.get(f));
          in.readFully(fresh);
          String text = new String(fresh, StandardCharsets.US_ASCII);
          int end =
              text.lastIndexOf('\n') + 1; // a line still being written waits for the next poll
          offsets.set(f, offsets.get(f) + end);
          text.substring(0, end).lines().forEach(this::read);
        } catch (IOException e) {
          throw new IllegalStateException("cannot read " + files.get(f), e);
        }
      }
      return this;
    }

    private void read(String line) {
      String[] p = line.split(" "); // micros, command id, kind, instance id
      byCommand.merge(p[1], 1, Integer::sum);
      if (p[2].equals("join")) {
        joinStarted.putIfAbsent(p[3], Long.parseLong(p[0]));
      }
    }
  }

  private Process child(ProcessBuilder builder) throws IOException {
    Process p = builder.start();
    synchronized (children) {
      children.add(p);
    }
    return p;
  }

  /** Ends the processes this benchmark started (only those), by their handles. */
  private void stopChildren() {
    synchronized (children) {
      for (Process p : children) {
        p.destroyForcibly();
      }
      for (Process p : children) {
        try {
          p.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      children.clear();
    }
  }

  private <T extends Path> T temporary(T path) {
    scratch.add(path);
    return path;
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // best effort: temporary files
    }
  }

  private static void expect(HttpResponse<Buffer> r, int... statuses) {
    if (Arrays.stream(statuses).noneMatch(s -> s == r.statusCode())) {
      throw new IllegalStateException("answered " + r.statusCode() + ": " + r.bodyAsString());
    }
  }

  private static void check(boolean holds, String otherwise) {
    if (!holds) {
      throw new IllegalStateException("CHECK FAILED: " + otherwise);
    }
  }

  private static long nowMicros() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

  private static double pct(long[] sortedMicros, double p) {
    int idx = (int) Math.ceil(p / 100.0 * sortedMicros.length) - 1;
    return sortedMicros[Math.max(0, Math.min(idx, sortedMicros.length - 1))] / 1000.0;
  }

  private static double mib(long bytes) {
    return bytes / 1048576.0;
  }

  private static int arg(String[] args, int index, int fallback) {
    return args.length > index ? Integer.parseInt(args[index]) : fallback;
  }

  private static String load() {
    try {
      String[] avg = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return avg[0] + " " + avg[1] + " " + avg[2];
    } catch (IOException e) {
      return "?";
    }
  }

  private static String openFileLimit() {
    try {
      return Files.readAllLines(Path.of("/proc/self/limits")).stream()
          .filter(l -> l.startsWith("Max open files"))
          .map(l -> l.split("\\s{2,}")[1])
          .findFirst()
          .orElse("?");
    } catch (IOException e) {
      return "?";
    }
  }
}
