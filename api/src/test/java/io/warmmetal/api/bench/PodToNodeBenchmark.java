package io.warmmetal.api.bench;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.commands.SimulatedKubelet;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.agent.fleet.SimulatedAgent;
import io.warmmetal.api.WarmMetalApi;
import io.warmmetal.api.controller.ClusterFixture;
import io.warmmetal.api.testing.TestEnv;
import io.warmmetal.controller.Controller;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.provisioning.Conditions;
import io.warmmetal.controller.scheduling.Resources;
import java.net.URI;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * The headline number: from a pending pod created to its Node Ready, broken into the brief's stages, for one pod and
 * bursts, with simulated joins of 0 s and 5 s. Everything is real but the Kubernetes API server (fabric8's mock, CRUD)
 * and the machines (simulated agents whose simulated kubelets register Nodes): the controller, the instances API on
 * PostgreSQL, the agent channel. All on this machine. Prints a table; asserts nothing.
 *
 * <p>Stages, per NodeClaim (one pod per node: each pod asks for 12 of a 16-cpu shape's cpus): notice + decide (pod
 * created → NodeClaim created), order (→ the join command sent down the agent's channel: the launch's API call,
 * its transaction and the push), join (→ the Node registered: the simulated join), ready (→ the NodeClaim
 * Initialized). The control plane's share is all but the join. In a burst every stage counts from the start of
 * the burst (its pods are created 16 at a time; the last column says how long that took).
 *
 * <pre>mvn -B -q install -DskipTests && mvn -B -q -pl api exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.warmmetal.api.bench.PodToNodeBenchmark -Dexec.args="500 10"</pre>
 * Arguments: the largest burst (default 500; the bursts are 1, 50 and that), repetitions of the one-pod case
 * (default 10).
 */
public final class PodToNodeBenchmark {
  private static final String ADMIN = "bench-admin-token-0123456789abcdef";
  private static final String SHAPE = ClusterFixture.SHAPE;

  private final Vertx vertx = Vertx.vertx();
  private final AtomicLong joinMillis = new AtomicLong();
  private final Map<String, Long> claimSeen = new ConcurrentHashMap<>();
  private final Map<String, Long> initialized = new ConcurrentHashMap<>();
  private final Map<String, Long> nodeSeen = new ConcurrentHashMap<>();
  private WarmMetalApi api;
  private KubernetesClient kube;
  private int machines;

  public static void main(String[] args) {
    try {
      new PodToNodeBenchmark().run(args.length > 0 ? Integer.parseInt(args[0]) : 500,
          args.length > 1 ? Integer.parseInt(args[1]) : 10);
      System.exit(0);
    } catch (Throwable t) {
      t.printStackTrace();
      System.exit(1);
    }
  }

  /** The mock server logs every request; held here so the setting sticks. */
  private static final java.util.logging.Logger MOCK_LOG = java.util.logging.Logger.getLogger("io.fabric8");

  private void run(int largestBurst, int repetitions) throws Exception {
    MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
    machines = largestBurst;
    api = WarmMetalApi.start(vertx, TestEnv.benchmark(ADMIN)).await();
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), responses,
        new KubernetesMixedDispatcher(responses), false);
    server.init(java.net.InetAddress.getLoopbackAddress(), 0);
    kube = server.createClient();
    long t0 = System.nanoTime();
    startAgents();
    System.out.printf("%d simulated machines enrolled and warm in %.1f s%n", machines,
        (System.nanoTime() - t0) / 1e9);
    installCluster();
    watch();
    KubernetesClient controllerClient = server.createClient();
    Controller controller = new Controller(controllerClient, new Controller.Settings(Duration.ofMillis(5),
        Duration.ofMillis(100), Resources.of(100, 256L << 20), 32));
    controller.start();

    burst(1); // unmeasured: the JIT's first pass through every path
    long[] calls = new long[200];
    for (int i = 0; i < calls.length; i++) {
      long t = System.nanoTime();
      kube.resources(NodePool.class).withName("default").get();
      calls[i] = System.nanoTime() - t;
    }
    java.util.Arrays.sort(calls);
    System.out.printf("the mock API server answers a GET in %.1f ms (p50; p99 %.1f ms)%n", calls[100] / 1e6,
        calls[197] / 1e6);
    List<String> rows = new ArrayList<>();
    for (long join : new long[] {0, 5_000}) {
      joinMillis.set(join);
      List<Stages> single = new ArrayList<>();
      for (int i = 0; i < repetitions; i++) {
        single.addAll(burst(1));
      }
      rows.add(row(1, join, repetitions, single));
      for (int burst : java.util.stream.IntStream.of(50, largestBurst).filter(b -> b > 1 && b <= largestBurst)
          .distinct().toArray()) {
        rows.add(row(burst, join, 1, burst(burst)));
      }
    }
    System.out.println();
    System.out.println("| pods | join | runs | notice+decide p50 | order p50 | join p50 | ready p50 "
        + "| control plane p50 / p99 | pod → Node Ready p50 / p99 | last join delivered | pods created in |");
    System.out.println("|---|---|---|---|---|---|---|---|---|---|---|");
    rows.forEach(System.out::println);
    System.out.printf("(ms; %d cores, %s %s; API, PostgreSQL, controller, mock API server and %d simulated machines "
        + "in one JVM)%n", Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.name"),
        System.getProperty("java.version"), machines);
    controller.close();
    controllerClient.close();
  }

  /** When each thing happened (epoch ms), for one NodeClaim of a run that began at {@code start}. */
  private record Stages(long start, long created, long claim, long delivered, long node, long ready) {
    long total() {
      return ready - start;
    }

    long controlPlane() {
      return total() - (node - delivered);
    }
  }

  /** Creates {@code pods} pending pods at once; waits for their Nodes; returns the stages; cleans up. */
  private List<Stages> burst(int pods) throws Exception {
    long start = System.currentTimeMillis();
    String run = UUID.randomUUID().toString().substring(0, 6);
    // Created 16 at a time, as a ReplicaSet controller creates a scale-up's pods in concurrent batches.
    java.util.concurrent.ExecutorService creators = java.util.concurrent.Executors.newFixedThreadPool(16);
    List<java.util.concurrent.Callable<Object>> creates = new ArrayList<>();
    for (int i = 0; i < pods; i++) {
      String name = "bench-" + run + "-" + i;
      creates.add(() -> kube.pods().inNamespace("default").resource(ClusterFixture.pending(name, "12")).create());
    }
    for (var done : creators.invokeAll(creates)) {
      done.get();
    }
    creators.shutdown();
    long created = System.currentTimeMillis();
    waitFor(() -> initialized.size() >= pods && claims().size() == pods, 120);
    List<Stages> stages = new ArrayList<>();
    for (NodeClaim c : claims()) {
      String name = c.getMetadata().getName();
      long delivered = deliveredAt(c.getMetadata().getAnnotations().get("warmmetal.io/instance-id"));
      stages.add(new Stages(start, created, claimSeen.get(name), delivered,
          nodeSeen.get(c.getStatus().nodeName), initialized.get(name)));
    }
    // Clean up: the pods go, the NodeClaims are deleted (termination resets the machines), all warm again. A pass
    // that ran before the controller saw the pods go may have planned a node for one: that claim goes too.
    kube.pods().inNamespace("default").delete();
    waitFor(() -> {
      List<NodeClaim> left = claims();
      left.stream().filter(c -> c.getMetadata().getDeletionTimestamp() == null)
          .forEach(c -> kube.resources(NodeClaim.class).withName(c.getMetadata().getName()).delete());
      return left.isEmpty() && warm() == machines;
    }, 120);
    claimSeen.clear();
    initialized.clear();
    nodeSeen.clear();
    return stages;
  }

  private String row(int pods, long join, int runs, List<Stages> s) {
    long lastDelivered = s.stream().mapToLong(x -> x.delivered - x.start).max().orElse(0);
    long creating = s.stream().mapToLong(x -> x.created - x.start).max().orElse(0);
    return String.format("| %d | %d s | %d | %d | %d | %d | %d | %d / %d | %d / %d | %d | %d |", pods, join / 1000,
        runs,
        p(s, x -> x.claim - x.start, 50), p(s, x -> x.delivered - x.claim, 50),
        p(s, x -> x.node - x.delivered, 50), p(s, x -> x.ready - x.node, 50),
        p(s, Stages::controlPlane, 50), p(s, Stages::controlPlane, 99), p(s, Stages::total, 50),
        p(s, Stages::total, 99), lastDelivered, creating);
  }

  private static long p(List<Stages> stages, java.util.function.ToLongFunction<Stages> f, double pct) {
    long[] v = stages.stream().mapToLong(f).sorted().toArray();
    return v[Math.max(0, (int) Math.ceil(pct / 100 * v.length) - 1)];
  }

  private long deliveredAt(String instanceId) {
    var rows = api.database().preparedQuery(
            "SELECT delivered_at FROM commands WHERE instance_id = $1 AND type = 'join'")
        .execute(Tuple.of(instanceId)).await();
    return rows.iterator().next().getOffsetDateTime("delivered_at").toInstant().toEpochMilli();
  }

  private List<NodeClaim> claims() {
    return kube.resources(NodeClaim.class).list().getItems();
  }

  private long warm() {
    return api.database().query("SELECT count(*) FROM machines WHERE state = 'warm'").execute().await().iterator()
        .next().getLong(0);
  }

  /** Records, from the benchmark's own watches, when each NodeClaim and Node appeared and changed. */
  private void watch() {
    kube.resources(NodeClaim.class).inform(new ResourceEventHandler<>() {
      @Override
      public void onAdd(NodeClaim c) {
        see(c);
      }

      @Override
      public void onUpdate(NodeClaim old, NodeClaim c) {
        see(c);
      }

      @Override
      public void onDelete(NodeClaim c, boolean unknown) {}
    });
    kube.nodes().inform(new ResourceEventHandler<>() {
      @Override
      public void onAdd(Node n) {
        nodeSeen.putIfAbsent(n.getMetadata().getName(), System.currentTimeMillis());
      }

      @Override
      public void onUpdate(Node old, Node n) {}

      @Override
      public void onDelete(Node n, boolean unknown) {}
    });
  }

  private void see(NodeClaim c) {
    long now = System.currentTimeMillis();
    String name = c.getMetadata().getName();
    claimSeen.putIfAbsent(name, now);
    if (c.getStatus() != null && Conditions.isTrue(c.getStatus().conditions, Conditions.INITIALIZED)) {
      initialized.putIfAbsent(name, now);
    }
  }

  private void startAgents() throws Exception {
    URI port = URI.create("https://127.0.0.1:" + api.agentPort());
    Enrollment enrollment = new Enrollment(vertx, port, api.caPin());
    WebSocketClient ws = vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false)
        .setMaxConnections(100_000));
    WebClient http = WebClient.create(vertx);
    String token = http.post(api.port(), "127.0.0.1", "/v1/enrollment-tokens")
        .putHeader("Authorization", "Bearer " + ADMIN).sendJsonObject(new JsonObject().put("uses", machines))
        .await().bodyAsJsonObject().getString("token");
    SimulatedExecutor instant = new SimulatedExecutor(vertx, Map.of("prepare", Distribution.parse("fixed:0s"),
        "join", Distribution.parse("fixed:0s"), "reset", Distribution.parse("fixed:0s")), 0.0, new Random(1));
    Executor withJoinTime = (command, progress) -> command.kind().equals("join") && joinMillis.get() > 0
        ? vertx.timer(joinMillis.get()).compose(x -> instant.run(command, progress))
        : instant.run(command, progress);
    List<Future<SimulatedAgent>> started = new ArrayList<>();
    for (int i = 0; i < machines; i++) {
      JsonObject facts = new JsonObject().put("cpus", 16).put("memoryMiB", 65536).put("arch", "x86_64");
      JsonObject machine = new JsonObject().put("name", "bench-node-" + i).put("facts", facts)
          .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
      started.add(SimulatedAgent.start(vertx, enrollment, ws, port, token, machine,
          Files.createTempDirectory("bench-agent"),
          new SimulatedKubelet(vertx, withJoinTime, new io.warmmetal.agent.commands.SimulatedNodes(kube), "bench-node-" + i, facts)));
      if (started.size() % 50 == 0) {
        Future.all(started.subList(started.size() - 50, started.size())).await();
      }
    }
    Future.all(started).await();
    http.put(api.port(), "127.0.0.1", "/v1/pools/" + SHAPE).putHeader("Authorization", "Bearer " + ADMIN)
        .sendJsonObject(new JsonObject().put("minWarm", machines).put("maxWarm", machines)).await();
    waitFor(() -> warm() == machines, 300);
  }

  private void installCluster() throws Exception {
    String clientToken = WebClient.create(vertx).post(api.port(), "127.0.0.1", "/v1/tokens")
        .putHeader("Authorization", "Bearer " + ADMIN)
        .sendJsonObject(new JsonObject().put("name", "controller").put("role", "client")).await()
        .bodyAsJsonObject().getString("token");
    ClusterFixture.install(kube, "http://127.0.0.1:" + api.port(), clientToken, pool -> {
      pool.getSpec().disruption = new NodePool.Disruption();
      pool.getSpec().disruption.consolidateAfter = "Never"; // the benchmark takes its nodes back itself
    });
  }

  private static void waitFor(BooleanSupplier condition, int seconds) throws InterruptedException {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out");
      }
      Thread.sleep(10);
    }
  }
}
