package io.warmmetal.e2e.bench;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.controller.buffers.CapacityBuffer;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass.PreJoined;
import io.warmmetal.e2e.Installation;
import io.warmmetal.e2e.RealMachine;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.NodeHost;
import io.warmmetal.fleet.SimulatedAgent;
import io.warmmetal.fleet.kubelet.SimulatedKubelet;
import io.warmmetal.fleet.kubelet.SimulatedNodes;
import java.io.IOException;
import java.io.StringReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;

/**
 * The headline number on real parts: from a pending pod created to its Node Ready (and the pod
 * Running), against a real control plane (etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler in a network namespace), the real controller as its ServiceAccount, the real API
 * on PostgreSQL. Prints tables; asserts nothing.
 *
 * <p>(a) One pod, a real join: the real agent on a prepared host (containerd; kubelet and kubeadm)
 * joins with kubeadm and a real kubelet registers the Node. Stages: notice + decide (pod created →
 * NodeClaim created), order (→ the join sent down the agent's channel), kubeadm discovery (the join
 * script's start → kubeadm has written the kubelet's files and the kubelet starts), TLS bootstrap
 * (→ the kubelet's CSR issued), registered (→ the Node created), Ready (→ the Node Ready), usable
 * (→ Ready with its taints lifted), bound (→ kube-scheduler bound the pod there), Running (→ the
 * kubelet ran it).
 *
 * <p>(c) One pod onto the same machine kept pre-joined by the node class ({@code spec.preJoined}):
 * notice + decide, take (→ the NodeClaim launched: the API handed the machine over), usable (→ the
 * Node relabelled and its standby taint lifted), bound, Running.
 *
 * <p>(b) Bursts of pods, each asking for 12 of a 16-cpu shape's cpus (one node each), onto
 * simulated machines whose simulated kubelets register Nodes in the same real API server: notice +
 * decide, order, and when the last join was delivered, from the burst's first pod (pods created 16
 * at a time, as a ReplicaSet controller does); and where each burst's time went ({@link
 * BurstTrace}: every NodeClaim's stages up to Initialized, the controller's passes, the CPU).
 *
 * <pre>mvn -B -q install -DskipTests && mvn -B -q -pl e2e exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.warmmetal.e2e.bench.PodToNodeBenchmark -Dexec.args="10 500"</pre>
 *
 * Arguments: runs of the real join (default 10; 0 skips it), the largest burst (default 500; bursts
 * are 50 and that; 0 skips them), and {@code no-nudge} to run the controller with {@code
 * --no-nudge-pods} (pods wait out kube-scheduler's backoff), and {@code controller=process} to run
 * the controller in its own JVM, as deployed, and print what it alone uses (CPU, live heap). Root.
 */
public final class PodToNodeBenchmark {
  private static final String SIMULATED_SHAPE = "x86-16c-64g";

  private final Vertx vertx = Vertx.vertx();
  private final Map<String, Long> claimSeen = new ConcurrentHashMap<>();
  private final Map<String, Long> claimInitialized = new ConcurrentHashMap<>();
  private final Map<String, Long> claimLaunched = new ConcurrentHashMap<>();
  private final Map<String, Long> nodeSeen = new ConcurrentHashMap<>();
  private final Map<String, Long> nodeReady = new ConcurrentHashMap<>();
  private final Map<String, Long> podRunning = new ConcurrentHashMap<>();

  /** When each Node was first Ready with no taint a pod must tolerate to be placed or run there. */
  private final Map<String, Long> nodeUsable = new ConcurrentHashMap<>();

  private final Map<String, Long> podBound = new ConcurrentHashMap<>();
  private final Map<String, Long> podUnschedulable = new ConcurrentHashMap<>();
  private final Map<String, Long> csrIssued = new ConcurrentHashMap<>();
  private ControlPlane cluster;

  /** The controller in its own JVM ({@code controller=process}), or null: in this one. */
  private ControllerProcess controller;

  /** The burst under way's stages, passes and CPU; null between bursts. */
  private volatile BurstTrace trace;

  private ApiFixture fx;
  private KubernetesClient kube;

  public static void main(String[] args) {
    PodToNodeBenchmark b = new PodToNodeBenchmark();
    try {
      List<String> options = args.length > 2 ? List.of(args).subList(2, args.length) : List.of();
      String paths =
          options.stream()
              .filter(o -> o.startsWith("paths="))
              .map(o -> o.substring("paths=".length()))
              .findFirst()
              .orElse("join,pre-joined,buffer");
      b.run(
          args.length > 0 ? Integer.parseInt(args[0]) : 10,
          args.length > 1 ? Integer.parseInt(args[1]) : 500,
          !options.contains("no-nudge"),
          List.of(paths.split(",")),
          options.contains("controller=process"));
      b.cluster.close();
      System.exit(0);
    } catch (Throwable t) {
      t.printStackTrace();
      if (b.cluster != null) {
        b.cluster.close();
      }
      System.exit(1);
    }
  }

  private void run(
      int runs, int largestBurst, boolean nudgePods, List<String> paths, boolean ownProcess)
      throws Exception {
    cluster = ControlPlane.start();
    kube = cluster.admin();
    Map<String, String> settings = new HashMap<>(RealMachine.apiSettings(cluster));
    settings.put("WARMMETAL_POOL_INTERVAL_MS", "1000");
    fx = ApiFixture.start(vertx, settings);
    Installation wm =
        Installation.install(
            cluster,
            "http://127.0.0.1:" + fx.api.port(),
            fx.token("client"),
            pool -> {
              pool.getSpec().disruption = new NodePool.Disruption();
              pool.getSpec().disruption.consolidateAfter =
                  "Never"; // the benchmark takes its nodes back itself
            });
    watch();
    if (ownProcess) {
      controller = ControllerProcess.start(cluster, wm.controllerToken(), nudgePods);
    } else {
      wm.startController(new KarpenterMetrics(), nudgePods);
    }
    if (runs > 0) {
      RealMachine metal = RealMachine.start(fx, cluster, "metal-1");
      if (paths.contains("join")) {
        List<String> real = new ArrayList<>();
        realJoin(metal, "warm-up"); // unmeasured: the JIT's first pass through every path
        for (int i = 0; i < runs; i++) {
          real.add(realJoin(metal, "run-" + i));
        }
        table(
            "(a) one pod, a real kubeadm join and kubelet (ms)",
            List.of(
                "run",
                "notice + decide",
                "order",
                "kubeadm discovery",
                "TLS bootstrap",
                "registered",
                "Ready",
                "pending pod → Node Ready",
                "usable: taints lifted",
                "bound (kube-scheduler)",
                "Running (kubelet)",
                "Node Ready → pod Running",
                "**pending pod → Running**",
                "join command → Ready"),
            real);
      }
      if (paths.contains("pre-joined")) {
        // (c) The same machine kept pre-joined by the node class: no join on the pod's path.
        List<String> standby = new ArrayList<>();
        wm.updateNodeClass(
            c -> c.getSpec().preJoined = List.of(new PreJoined(metal.shape, 1, null)));
        preJoined(metal, "warm-up");
        for (int i = 0; i < runs; i++) {
          standby.add(preJoined(metal, "run-" + i));
        }
        table(
            "(c) one pod onto a pre-joined node: the real machine joined ahead of time (ms)",
            List.of(
                "run",
                "notice + decide",
                "take: the API hands the pre-joined machine over",
                "usable: Node relabelled, standby taint lifted",
                "bound (kube-scheduler)",
                "Running (kubelet)",
                "**pending pod → Node usable**",
                "**pending pod → Running**"),
            standby);
        wm.updateNodeClass(c -> c.getSpec().preJoined = List.of());
        takeBack(() -> "warm".equals(metal.state(fx)));
      }
      if (paths.contains("buffer")) {
        // (d) An active CapacityBuffer keeps room on the machine, joined and Ready: a pod lands in
        // it.
        keepRoom();
        List<String> room = new ArrayList<>();
        intoRoom(metal, "warm-up");
        for (int i = 0; i < runs; i++) {
          room.add(intoRoom(metal, "run-" + i));
        }
        table(
            "(d) one pod into a CapacityBuffer's room on the real machine (ms)",
            List.of(
                "run", "bound (kube-scheduler)", "Running (kubelet)", "**pod created → Running**"),
            room);
        kube.resources(CapacityBuffer.class).inNamespace("default").delete();
        takeBack(() -> "warm".equals(metal.state(fx)));
      }
      metal.close();
    }

    List<String> bursts = new ArrayList<>();
    if (largestBurst == 0) {
      closeController(wm);
      fx.close();
      return;
    }
    startSimulatedMachines(largestBurst);
    burst(8, "warm-up");
    for (int size :
        IntStream.of(50, largestBurst).filter(b -> b <= largestBurst).distinct().toArray()) {
      bursts.add(burst(size, "burst-" + size));
    }
    table(
        "(b) bursts onto simulated kubelets, real control plane (ms from the burst's first pod)",
        List.of(
            "pods",
            "all pods marked unschedulable (kube-scheduler)",
            "notice + decide p50 / max",
            "order p50",
            "last join delivered",
            "all Nodes registered",
            "all NodeClaims initialized",
            "pods created in"),
        bursts);
    System.out.printf(
        "(%d cores, %s %s; control plane, API, PostgreSQL, controller and machines on this machine)%n",
        Runtime.getRuntime().availableProcessors(),
        System.getProperty("java.vm.name"),
        System.getProperty("java.version"));
    closeController(wm);
    fx.close();
  }

  private static void table(String title, List<String> columns, List<String> rows) {
    System.out.println();
    System.out.println(title);
    System.out.println("| " + String.join(" | ", columns) + " |");
    System.out.println("|" + "---|".repeat(columns.size()));
    rows.forEach(System.out::println);
  }

  /**
   * One pending pod that only the real machine fits; its stages; then the node taken back and the
   * machine warm.
   */
  private String realJoin(RealMachine metal, String run) throws Exception {
    clear();
    long start = System.currentTimeMillis();
    String pod = "real-" + run;
    createPod(pod);
    waitFor(
        () -> podRunning.containsKey(pod) && !claimInitialized.isEmpty(),
        180,
        () -> metal.story(fx));
    NodeClaim claim = claims().get(0);
    String instance = claim.getMetadata().getAnnotations().get("warmmetal.io/instance-id");
    long delivered = deliveredAt(instance);
    Map<String, Long> steps = steps(instance);
    String node = claim.getStatus().nodeName;
    long claimAt = claimSeen.get(claim.getMetadata().getName());
    long csr = csrIssued.getOrDefault(node, 0L);
    String row =
        String.format(
            "| %s | %d | %d | %d | %d | %d | %d | **%d** | %d | %d | %d | %d | **%d** | %d |",
            run,
            claimAt - start,
            delivered - claimAt,
            steps.get("kubelet-start") - steps.get("kubeadm-join"),
            csr - steps.get("kubelet-start"),
            nodeSeen.get(node) - csr,
            nodeReady.get(node) - nodeSeen.get(node),
            nodeReady.get(node) - start,
            nodeUsable.get(node) - nodeReady.get(node),
            podBound.get(pod) - nodeUsable.get(node),
            podRunning.get(pod) - podBound.get(pod),
            podRunning.get(pod) - nodeReady.get(node),
            podRunning.get(pod) - start,
            nodeReady.get(node) - delivered);
    takeBack(() -> "warm".equals(metal.state(fx)));
    return row;
  }

  /** A pending pod that only the real machine fits (its image is there already). */
  private void createPod(String name) {
    kube.pods()
        .inNamespace("default")
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace("default")
                .endMetadata()
                .withNewSpec()
                .withTerminationGracePeriodSeconds(0L)
                .addNewContainer()
                .withName("app")
                .withImage(NodeHost.BUSYBOX_IMAGE)
                .withImagePullPolicy("Never")
                .withCommand("sleep", "3600")
                .withNewResources()
                .addToRequests("cpu", new Quantity("100m"))
                .endResources()
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  /**
   * One pending pod onto the real machine pre-joined ahead of time (the node class keeps one); its
   * stages; then the node taken back and the machine pre-joined again.
   */
  private String preJoined(RealMachine metal, String run) throws Exception {
    waitFor(
        () -> "pre-joined".equals(metal.state(fx)) && standbyReady(metal.name),
        300,
        () -> metal.story(fx));
    clear();
    long start = System.currentTimeMillis();
    String pod = "pre-" + run;
    createPod(pod);
    waitFor(() -> podRunning.containsKey(pod), 180, () -> metal.story(fx));
    NodeClaim claim = claims().get(0);
    String node = claim.getStatus().nodeName;
    long claimAt = claimSeen.get(claim.getMetadata().getName());
    long launchedAt = claimLaunched.get(claim.getMetadata().getName());
    String row =
        String.format(
            "| %s | %d | %d | %d | %d | %d | **%d** | **%d** |",
            run,
            claimAt - start,
            launchedAt - claimAt,
            nodeUsable.get(node) - launchedAt,
            podBound.get(pod) - nodeUsable.get(node),
            podRunning.get(pod) - podBound.get(pod),
            nodeUsable.get(node) - start,
            podRunning.get(pod) - start);
    takeBack(() -> true);
    return row;
  }

  /** An active CapacityBuffer of one 100m chunk: the real machine joined and kept as its room. */
  private void keepRoom() throws Exception {
    kube.resource(
            Serialization.<HasMetadata>unmarshal(
                """
                apiVersion: v1
                kind: PodTemplate
                metadata: {name: room, namespace: default}
                template:
                  spec:
                    containers:
                      - {name: app, image: app, resources: {requests: {cpu: 100m}}}
                """))
        .create();
    kube.resource(
            Serialization.<HasMetadata>unmarshal(
                """
                apiVersion: autoscaling.x-k8s.io/v1beta1
                kind: CapacityBuffer
                metadata: {name: room, namespace: default}
                spec: {podTemplateRef: {name: room}, replicas: 1}
                """))
        .create();
    waitFor(() -> !claimInitialized.isEmpty(), 180, () -> "the buffer's node not initialized");
  }

  /** One pod created where a buffer keeps room: bound and Running, no node work on its path. */
  private String intoRoom(RealMachine metal, String run) throws Exception {
    String pod = "room-" + run;
    podBound.remove(pod);
    podRunning.remove(pod);
    long start = System.currentTimeMillis();
    createPod(pod);
    waitFor(() -> podRunning.containsKey(pod), 120, () -> metal.story(fx));
    String row =
        String.format(
            "| %s | %d | %d | **%d** |",
            run,
            podBound.get(pod) - start,
            podRunning.get(pod) - podBound.get(pod),
            podRunning.get(pod) - start);
    kube.pods().inNamespace("default").withName(pod).withGracePeriod(0).delete();
    waitFor(
        () -> kube.pods().inNamespace("default").withName(pod).get() == null,
        60,
        () -> "pod " + pod + " not gone");
    return row;
  }

  /** Whether the machine's Node is Ready, as a standby node (its label on). */
  private boolean standbyReady(String node) {
    Node n = kube.nodes().withName(node).get();
    return n != null
        && n.getMetadata().getLabels().containsKey(WellKnown.STANDBY)
        && n.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /** A burst of {@code pods} pending pods at once onto simulated machines. */
  private String burst(int pods, String run) throws Exception {
    clear();
    long start = System.currentTimeMillis();
    trace = new BurstTrace(start, cluster);
    double cpuBefore = controller == null ? 0 : controller.cpuSeconds();
    int gcMark = controller == null ? 0 : controller.gcMark();
    ExecutorService creators = Executors.newFixedThreadPool(16);
    List<Callable<Object>> creates = new ArrayList<>();
    for (int i = 0; i < pods; i++) {
      String name = run + "-" + i;
      creates.add(
          () ->
              kube.pods()
                  .inNamespace("default")
                  .resource(
                      new PodBuilder()
                          .withNewMetadata()
                          .withName(name)
                          .withNamespace("default")
                          .endMetadata()
                          .withNewSpec()
                          .withTerminationGracePeriodSeconds(0L)
                          .addNewContainer()
                          .withName("app")
                          .withImage("busybox")
                          .withNewResources()
                          .addToRequests("cpu", new Quantity("12"))
                          .endResources()
                          .endContainer()
                          .endSpec()
                          .build())
                  .create());
    }
    for (var done : creators.invokeAll(creates)) {
      done.get();
    }
    creators.shutdown();
    long created = System.currentTimeMillis();
    waitFor(
        () -> claimInitialized.size() >= pods, 300, () -> "initialized " + claimInitialized.size());
    List<Long> notice = new ArrayList<>();
    List<Long> order = new ArrayList<>();
    long lastDelivered = 0;
    for (NodeClaim c : claims()) {
      long seen = claimSeen.get(c.getMetadata().getName());
      long delivered =
          deliveredAt(c.getMetadata().getAnnotations().get("warmmetal.io/instance-id"));
      notice.add(seen - start);
      order.add(delivered - seen);
      lastDelivered = Math.max(lastDelivered, delivered - start);
    }
    List<BurstTrace.Claim> traced = new ArrayList<>();
    for (NodeClaim c : claims()) {
      String name = c.getMetadata().getName();
      traced.add(
          new BurstTrace.Claim(
              name,
              c.getStatus() == null ? null : c.getStatus().nodeName,
              claimSeen.getOrDefault(name, 0L),
              claimLaunched.getOrDefault(name, 0L),
              deliveredAt(c.getMetadata().getAnnotations().get("warmmetal.io/instance-id"))));
    }
    trace.report(run, traced, podBound);
    if (controller != null) {
      double seconds = (System.currentTimeMillis() - start) / 1000.0;
      double cpu = controller.cpuSeconds() - cpuBefore;
      System.out.printf(
          "%s: the controller's own JVM used %.1f s of CPU in %.1f s (%.2f cores on average);"
              + " live heap (after GC) at most %d MiB; resident %d MiB%n",
          run,
          cpu,
          seconds,
          cpu / seconds,
          controller.liveHeapMiBSince(gcMark),
          controller.residentMiB());
    }
    trace.close();
    trace = null;
    long marked =
        podUnschedulable.values().stream().mapToLong(Long::longValue).max().orElse(0) - start;
    long registered = nodeSeen.values().stream().mapToLong(Long::longValue).max().orElse(0) - start;
    long initialized =
        claimInitialized.values().stream().mapToLong(Long::longValue).max().orElse(0) - start;
    takeBack(
        () ->
            fx.count(
                    "SELECT count(*) FROM machines WHERE state = 'warm' AND shape = $1",
                    SIMULATED_SHAPE)
                == simulated);
    return String.format(
        "| %d | %d | %d / %d | %d | **%d** | %d | %d | %d |",
        pods,
        marked,
        p50(notice),
        notice.stream().mapToLong(Long::longValue).max().orElse(0),
        p50(order),
        lastDelivered,
        registered,
        initialized,
        created - start);
  }

  private void closeController(Installation wm) {
    if (controller != null) {
      controller.close();
    }
    wm.close();
  }

  private static long p50(List<Long> values) {
    long[] v = values.stream().mapToLong(Long::longValue).sorted().toArray();
    return v.length == 0 ? 0 : v[(v.length - 1) / 2];
  }

  /**
   * The pods go, the NodeClaims are deleted (termination resets the machines); waits until all are
   * warm.
   */
  private void takeBack(BooleanSupplier allWarm) throws Exception {
    kube.pods().inNamespace("default").withGracePeriod(0).delete();
    waitFor(
        () -> {
          List<NodeClaim> left = claims();
          left.stream()
              .filter(c -> c.getMetadata().getDeletionTimestamp() == null)
              .forEach(
                  c ->
                      kube.resources(NodeClaim.class).withName(c.getMetadata().getName()).delete());
          return left.isEmpty() && allWarm.getAsBoolean();
        },
        300,
        () -> "claims left " + claims().size());
  }

  private void clear() {
    claimSeen.clear();
    claimInitialized.clear();
    claimLaunched.clear();
    nodeSeen.clear();
    nodeReady.clear();
    nodeUsable.clear();
    podBound.clear();
    podRunning.clear();
    podUnschedulable.clear();
    csrIssued.clear();
  }

  private long deliveredAt(String instanceId) {
    return fx.db()
        .preparedQuery("SELECT delivered_at FROM commands WHERE instance_id = $1 AND type = 'join'")
        .execute(Tuple.of(instanceId))
        .await()
        .iterator()
        .next()
        .getOffsetDateTime("delivered_at")
        .toInstant()
        .toEpochMilli();
  }

  /**
   * When the join script announced each step (its progress events, recorded by the API as they
   * arrive).
   */
  private Map<String, Long> steps(String instanceId) {
    Map<String, Long> steps = new HashMap<>();
    fx.db()
        .preparedQuery(
            "SELECT reason, at FROM events WHERE instance_id = $1 AND type = 'CommandProgress'")
        .execute(Tuple.of(instanceId))
        .await()
        .forEach(
            r ->
                steps.put(
                    r.getString("reason"), r.getOffsetDateTime("at").toInstant().toEpochMilli()));
    return steps;
  }

  private List<NodeClaim> claims() {
    return kube.resources(NodeClaim.class).list().getItems();
  }

  private int simulated;

  private void startSimulatedMachines(int n) throws Exception {
    simulated = n;
    long t0 = System.nanoTime();
    URI port = URI.create("https://" + cluster.network().hostAddress() + ":" + fx.api.agentPort());
    Enrollment enrollment = new Enrollment(vertx, port, fx.api.caPin());
    WebSocketClient ws =
        vertx.createWebSocketClient(
            new WebSocketClientOptions().setVerifyHost(false).setMaxConnections(100_000));
    String token =
        fx.client
            .post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject().put("uses", n))
            .body()
            .getString("token");
    Executor instant =
        new SimulatedExecutor(
            vertx,
            Map.of(
                "prepare",
                Distribution.parse("fixed:0s"),
                "join",
                Distribution.parse("fixed:0s"),
                "reset",
                Distribution.parse("fixed:0s")),
            0.0,
            new Random(1));
    SimulatedNodes kubelets = new SimulatedNodes(kube);
    List<Future<SimulatedAgent>> started = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      JsonObject facts =
          new JsonObject().put("cpus", 16).put("memoryMiB", 65536).put("arch", "x86_64");
      JsonObject machine =
          new JsonObject()
              .put("name", "sim-" + i)
              .put("facts", facts)
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
              new SimulatedKubelet(vertx, instant, kubelets, "sim-" + i, facts)));
      if (started.size() % 50 == 0) {
        Future.all(started.subList(started.size() - 50, started.size())).await();
      }
    }
    Future.all(started).await();
    fx.client.put(
        "/v1/pools/" + SIMULATED_SHAPE,
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", n).put("maxWarm", n));
    waitFor(
        () ->
            fx.count(
                    "SELECT count(*) FROM machines WHERE state = 'warm' AND shape = $1",
                    SIMULATED_SHAPE)
                == n,
        300,
        () -> "simulated machines warm");
    System.out.printf(
        "%n%d simulated machines enrolled and warm in %.1f s%n", n, (System.nanoTime() - t0) / 1e9);
  }

  /**
   * Records, from the benchmark's own watches, when each NodeClaim, Node, CSR and pod reached its
   * stages.
   */
  private void watch() {
    kube.resources(NodeClaim.class)
        .inform(
            handler(
                c -> {
                  long now = System.currentTimeMillis();
                  BurstTrace burst = trace;
                  if (burst != null) {
                    burst.claim(c);
                  }
                  claimSeen.putIfAbsent(c.getMetadata().getName(), now);
                  if (c.getStatus() != null
                      && Conditions.isTrue(c.getStatus().conditions, Conditions.INITIALIZED)) {
                    claimInitialized.putIfAbsent(c.getMetadata().getName(), now);
                  }
                  if (c.getStatus() != null
                      && Conditions.isTrue(c.getStatus().conditions, Conditions.LAUNCHED)) {
                    claimLaunched.putIfAbsent(c.getMetadata().getName(), now);
                  }
                }));
    kube.nodes()
        .inform(
            handler(
                (Node n) -> {
                  long now = System.currentTimeMillis();
                  BurstTrace burst = trace;
                  if (burst != null) {
                    burst.node(n);
                  }
                  nodeSeen.putIfAbsent(n.getMetadata().getName(), now);
                  if (n.getStatus() != null
                      && n.getStatus().getConditions() != null
                      && n.getStatus().getConditions().stream()
                          .anyMatch(
                              c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()))) {
                    nodeReady.putIfAbsent(n.getMetadata().getName(), now);
                    if (n.getSpec().getTaints() == null
                        || n.getSpec().getTaints().stream()
                            .allMatch(t -> "PreferNoSchedule".equals(t.getEffect()))) {
                      nodeUsable.putIfAbsent(n.getMetadata().getName(), now);
                    }
                  }
                }));
    kube.pods()
        .inNamespace("default")
        .inform(
            handler(
                (Pod p) -> {
                  if (p.getSpec().getNodeName() != null) {
                    podBound.putIfAbsent(p.getMetadata().getName(), System.currentTimeMillis());
                  }
                  if (p.getStatus() != null && "Running".equals(p.getStatus().getPhase())) {
                    podRunning.putIfAbsent(p.getMetadata().getName(), System.currentTimeMillis());
                  }
                  if (p.getStatus() != null
                      && p.getStatus().getConditions() != null
                      && p.getStatus().getConditions().stream()
                          .anyMatch(
                              c ->
                                  "PodScheduled".equals(c.getType())
                                      && "Unschedulable".equals(c.getReason()))) {
                    podUnschedulable.putIfAbsent(
                        p.getMetadata().getName(), System.currentTimeMillis());
                  }
                }));
    kube.certificates()
        .v1()
        .certificateSigningRequests()
        .inform(
            handler(
                (CertificateSigningRequest r) -> {
                  if (r.getStatus() != null
                      && r.getStatus().getCertificate() != null
                      && r.getSpec().getUsername() != null) {
                    // The bootstrap identity asks for the node's client certificate:
                    // system:node:<name> is its subject.
                    csrIssued.putIfAbsent(nodeOf(r), System.currentTimeMillis());
                  }
                }));
  }

  private static String nodeOf(CertificateSigningRequest r) {
    String pem =
        new String(Base64.getDecoder().decode(r.getSpec().getRequest()), StandardCharsets.UTF_8);
    try (var parser = new PEMParser(new StringReader(pem))) {
      var request = (PKCS10CertificationRequest) parser.readObject();
      String subject = request.getSubject().toString();
      int at = subject.indexOf("system:node:");
      return at < 0 ? subject : subject.substring(at + "system:node:".length()).split(",")[0];
    } catch (IOException e) {
      return "?";
    }
  }

  private static <T> ResourceEventHandler<T> handler(Consumer<T> seen) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        seen.accept(obj);
      }

      @Override
      public void onUpdate(T old, T obj) {
        seen.accept(obj);
      }

      @Override
      public void onDelete(T obj, boolean unknown) {}
    };
  }

  private static void waitFor(BooleanSupplier condition, int seconds, Supplier<String> why)
      throws InterruptedException {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out at " + Instant.now() + ": " + why.get());
      }
      Thread.sleep(10);
    }
  }
}
