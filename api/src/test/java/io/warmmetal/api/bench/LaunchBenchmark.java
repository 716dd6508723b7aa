package io.warmmetal.api.bench;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.warmmetal.api.WarmMetalApi;
import io.warmmetal.api.config.ApiConfig;
import io.warmmetal.api.testing.TestEnv;
import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * Launch throughput and latency: registers N warm machines, then fires launches from C concurrent
 * clients (each sends its next launch when the last one answers) and prints launches/s and latency
 * percentiles. The API runs in this JVM on a real PostgreSQL (the embedded one unless
 * WARMMETAL_TEST_DATABASE_URL names another), over real HTTP on loopback. Not a test: it asserts
 * nothing, it measures.
 *
 * <p>That first run finds the most the API does (every client always waiting, so by Little's law
 * the mean latency is the concurrency over the rate). A second, paced run then offers launches at a
 * steady rate (default 2,000 a second, at most C in flight) and charges each launch from the moment
 * it was due: the latency clients see at that rate.
 *
 * <p>Then, in the same run and on the same database (its machines made warm again), {@code pgbench}
 * calls the launch function alone, no HTTP and no API, as many launches as the API's run each: one
 * launch per call at 4, 8 and 16 clients (the best is printed), and launches in batches of the size
 * the API sent at as many clients as the API had calls in flight. The benchmark prints the API's
 * rate divided by each. {@code pgbench} comes with {@code postgresql-client} ({@code apt-get
 * install postgresql-client}); without it that part is skipped.
 *
 * <pre>mvn -B -q install -DskipTests && mvn -B -q -pl api exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.warmmetal.api.bench.LaunchBenchmark -Dexec.args="20000 200 2000 2000"</pre>
 *
 * Arguments: launches (default 20000), concurrency (default 200), warm-up launches (default 2000),
 * the rate of the paced run (default 2000 a second).
 */
public final class LaunchBenchmark {

  public static void main(String[] args) {
    try {
      measure(args);
    } catch (Throwable t) {
      t.printStackTrace(); // and exit: the server's threads would keep the JVM waiting
      System.exit(1);
    }
  }

  private static void measure(String[] args) throws Exception {
    int launches = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
    int concurrency = args.length > 1 ? Integer.parseInt(args[1]) : 200;
    int warmup = args.length > 2 ? Integer.parseInt(args[2]) : 2_000;
    int offered = args.length > 3 ? Integer.parseInt(args[3]) : 2_000;
    String admin = "bench-admin-token-0123456789abcdef";

    Vertx vertx = Vertx.vertx();
    ApiConfig config = TestEnv.benchmark(admin);
    WarmMetalApi api = WarmMetalApi.start(vertx, config).await();
    WebClient http =
        WebClient.create(
            vertx,
            new WebClientOptions().setKeepAlive(true),
            new PoolOptions().setHttp1MaxSize(concurrency));
    int port = api.port();

    long t0 = System.nanoTime();
    run(
            concurrency,
            warmup + 2 * launches,
            i ->
                http.post(port, "127.0.0.1", "/v1/machines")
                    .putHeader("Authorization", "Bearer " + admin)
                    .sendJsonObject(
                        new JsonObject()
                            .put("name", "bench-" + i)
                            .put("prepared", true)
                            .put(
                                "facts",
                                new JsonObject()
                                    .put("cpus", 32)
                                    .put("memoryMiB", 262144)
                                    .put("arch", "x86_64")))
                    .map(r -> expect(r.statusCode(), 201, r.bodyAsString())))
        .await();
    System.out.printf(
        "registered %d warm machines in %.1f s%n",
        warmup + 2 * launches, (System.nanoTime() - t0) / 1e9);

    LaunchRun warm = launch(http, port, admin, concurrency, warmup);
    System.out.printf("warm-up: %d launches, %.0f launches/s%n", warmup, warm.perSecond());
    LaunchRun measured = launch(http, port, admin, concurrency, launches);
    String metrics =
        http.get(api.metricsPort(), "127.0.0.1", "/metrics").send().await().bodyAsString();
    LaunchRun paced = launchAtRate(vertx, http, port, admin, concurrency, launches, offered);

    System.out.println();
    System.out.println("| launches | sent | launches/s | p50 ms | p90 ms | p99 ms | max ms |");
    System.out.println("|---|---|---|---|---|---|---|");
    measured.print(launches, concurrency + " at a time");
    paced.print(launches, offered + "/s, ≤" + concurrency + " at a time");
    System.out.printf(
        "p99 ms by quarter of the run: %s (at a time); %s (paced)%n",
        measured.quarterP99s(), paced.quarterP99s());
    System.out.printf(
        "inside the API, p50 / p99 ms (the last minutes, warm-up included, before the paced run): %s%n",
        stages(metrics));
    double batchSize = batchSize(metrics);
    int callsInFlight = config.launchesInFlight();
    System.out.printf(
        "(%d cores, %s %s; launches per database call: %.1f on average, %d calls at a time)%n",
        Runtime.getRuntime().availableProcessors(),
        System.getProperty("java.vm.name"),
        System.getProperty("java.version"),
        batchSize,
        callsInFlight);

    api.stop().await(); // the database to pgbench alone
    FunctionBenchmark function =
        FunctionBenchmark.locate(vertx, config.databaseUrl().orElseThrow().value());
    if (function != null) {
      double single = 0;
      for (int clients : new int[] {4, 8, 16}) {
        single = Math.max(single, function.launchesPerSecond(clients, 1, launches));
      }
      int perCall = (int) Math.round(batchSize);
      double batched = function.launchesPerSecond(callsInFlight, perCall, launches);
      System.out.printf(
          "pgbench, the launch function alone: %.0f launches/s one per call (best of 4, 8, 16 clients);"
              + " %.0f launches/s %d per call at %d clients (as the API sent them)%n",
          single, batched, perCall, callsInFlight);
      System.out.printf(
          "API (at a time) / pgbench = %.2f (one per call), %.2f (as the API sent them)%n",
          measured.perSecond() / single, measured.perSecond() / batched);
    }
    vertx.close();
    System.exit(0);
  }

  private static LaunchRun launch(
      WebClient http, int port, String token, int concurrency, int count) {
    long[] latencies = new long[count];
    long start = System.nanoTime();
    run(
            concurrency,
            count,
            i -> {
              long sent = System.nanoTime();
              return sendLaunch(http, port, token)
                  .onSuccess(ok -> latencies[i] = System.nanoTime() - sent);
            })
        .await();
    return new LaunchRun(latencies, System.nanoTime() - start);
  }

  /**
   * Launches sent on a schedule, {@code perSecond} of them a second, at most {@code concurrency} in
   * flight: each latency counts from the moment its launch was due, so a launch held back because
   * the API was slow (or because all connections were busy) is charged for the wait — the latency a
   * steady stream of clients sees.
   */
  private static LaunchRun launchAtRate(
      Vertx vertx,
      WebClient http,
      int port,
      String token,
      int concurrency,
      int count,
      int perSecond) {
    long[] latencies = new long[count];
    Promise<Void> done = Promise.promise();
    AtomicInteger finished = new AtomicInteger();
    int[] next = {0};
    int[] inFlight = {0};
    long start = System.nanoTime();
    long[] timer = new long[1];
    Context context = vertx.getOrCreateContext(); // the schedule's counters live on its thread
    Runnable[] pump = new Runnable[1];
    pump[0] =
        () -> {
          long now = System.nanoTime();
          while (next[0] < count && inFlight[0] < concurrency) {
            int i = next[0];
            long due = start + (long) (i * 1e9 / perSecond);
            if (due > now) {
              return;
            }
            next[0]++;
            inFlight[0]++;
            sendLaunch(http, port, token)
                .onComplete(
                    ar ->
                        context.runOnContext(
                            v -> {
                              inFlight[0]--;
                              latencies[i] = System.nanoTime() - due;
                              if (ar.failed()) {
                                done.tryFail(ar.cause());
                              } else if (finished.incrementAndGet() == count) {
                                vertx.cancelTimer(timer[0]);
                                done.tryComplete();
                              } else {
                                pump[0].run();
                              }
                            }));
          }
        };
    context.runOnContext(v -> timer[0] = vertx.setPeriodic(1, id -> pump[0].run()));
    done.future().await();
    return new LaunchRun(latencies, System.nanoTime() - start);
  }

  private static Future<Object> sendLaunch(WebClient http, int port, String token) {
    return http.post(port, "127.0.0.1", "/v1/instances")
        .putHeader("Authorization", "Bearer " + token)
        .sendJsonObject(
            new JsonObject()
                .put("shape", "x86-32c-256g")
                .put("clientToken", UUID.randomUUID().toString()))
        .map(r -> expect(r.statusCode(), 201, r.bodyAsString()));
  }

  /**
   * Runs {@code total} operations with {@code concurrency} in flight; fails on the first failure.
   */
  private static Future<Void> run(int concurrency, int total, IntFunction<Future<?>> op) {
    Promise<Void> done = Promise.promise();
    AtomicInteger next = new AtomicInteger();
    AtomicInteger finished = new AtomicInteger();
    Runnable[] worker = new Runnable[1];
    worker[0] =
        () -> {
          int i = next.getAndIncrement();
          if (i >= total) {
            return;
          }
          op.apply(i)
              .onComplete(
                  ar -> {
                    if (ar.failed()) {
                      done.tryFail(ar.cause());
                    } else if (finished.incrementAndGet() == total) {
                      done.tryComplete();
                    } else {
                      worker[0].run();
                    }
                  });
        };
    for (int w = 0; w < Math.min(concurrency, total); w++) {
      worker[0].run();
    }
    return done.future();
  }

  /** Where launches' time went inside the API, from its own metric. */
  private static String stages(String metrics) {
    StringBuilder out = new StringBuilder();
    for (String stage : new String[] {"prepare", "queued", "database"}) {
      out.append(out.length() == 0 ? "" : "; ")
          .append(
              String.format(
                  "%s %.1f / %.1f",
                  stage,
                  1000 * quantile(metrics, stage, "0.5"),
                  1000 * quantile(metrics, stage, "0.99")));
    }
    return out.toString();
  }

  private static double quantile(String metrics, String stage, String quantile) {
    return metrics
        .lines()
        .filter(
            l ->
                l.startsWith("warmmetal_launch_stage_seconds{")
                    && l.contains("stage=\"" + stage + "\"")
                    && l.contains("quantile=\"" + quantile + "\""))
        .findFirst()
        .map(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .orElse(Double.NaN);
  }

  /** The mean launches per database call, from the API's own metric. */
  private static double batchSize(String metrics) {
    double count = metric(metrics, "warmmetal_launch_batch_size_count");
    return count == 0 ? 1 : metric(metrics, "warmmetal_launch_batch_size_sum") / count;
  }

  private static double metric(String exposition, String name) {
    return exposition
        .lines()
        .filter(l -> l.startsWith(name + " "))
        .findFirst()
        .map(l -> Double.parseDouble(l.substring(name.length() + 1).trim()))
        .orElse(0.0);
  }

  private static Object expect(int status, int wanted, String body) {
    if (status != wanted) {
      throw new IllegalStateException("expected " + wanted + " but got " + status + ": " + body);
    }
    return null;
  }

  private record LaunchRun(long[] latencies, long elapsedNanos) {
    void print(int launches, String sent) {
      System.out.printf(
          "| %d | %s | %.0f | %.1f | %.1f | %.1f | %.1f |%n",
          launches,
          sent,
          perSecond(),
          percentile(50),
          percentile(90),
          percentile(99),
          percentile(100));
    }

    double perSecond() {
      return latencies.length / (elapsedNanos / 1e9);
    }

    /**
     * p99 of each quarter of the run, in launch order: whether the tail comes as the machines run
     * out.
     */
    String quarterP99s() {
      StringBuilder out = new StringBuilder();
      int quarter = latencies.length / 4;
      for (int q = 0; q < 4; q++) {
        LaunchRun part =
            new LaunchRun(
                Arrays.copyOfRange(latencies, q * quarter, (q + 1) * quarter), elapsedNanos);
        out.append(q == 0 ? "" : " / ").append(String.format("%.1f", part.percentile(99)));
      }
      return out.toString();
    }

    double percentile(double p) {
      long[] sorted = latencies.clone();
      Arrays.sort(sorted);
      int idx = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
      return sorted[Math.max(0, Math.min(idx, sorted.length - 1))] / 1e6;
    }
  }
}
