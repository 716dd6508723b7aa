package io.warmmetal.e2e.bench;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import com.sun.management.OperatingSystemMXBean;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Taint;
import io.warmmetal.controller.Controller;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeReadiness;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.registration.Registration;
import io.warmmetal.e2e.cluster.Commands;
import io.warmmetal.e2e.cluster.ControlPlane;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.LoggerFactory;

/**
 * Where a burst's seconds go between a Node's registration and its NodeClaim's initialization: each
 * Node's and NodeClaim's stages as the benchmark's watches see them (created, Ready, the not-ready
 * taint lifted by kube-controller-manager, the unregistered taint lifted by the controller,
 * Registered, Initialized), the controller's passes step by step (its DEBUG lines) and its
 * Registration's INFO lines, the CPU of the controller's threads (pass, lifecycle, creators), this
 * JVM and the control plane's processes, sampled twice a second, and kube-controller-manager's
 * requests.
 */
final class BurstTrace implements AutoCloseable {
  private static final String NOT_READY_TAINT = "node.kubernetes.io/not-ready";

  /**
   * The controller's own threads: its pass, its claims' lifecycle workers, its NodeClaim creators
   * and its shapes readers (informers and HTTP clients are shared with the rest of the JVM).
   */
  private static boolean controllerThread(String name) {
    return name.equals("warmmetal-reconcile")
        || name.startsWith("nodeclaim-")
        || name.startsWith("warmmetal-create")
        || name.startsWith("warmmetal-shapes");
  }

  private static final long TICK_NANOS = 10_000_000L; // /proc/<pid>/stat counts in 1/100 s

  private final long start;
  private final ControlPlane cluster;

  /** kube-controller-manager's requests to the API server (method, code) when the burst began. */
  private final Map<String, Long> managerRequestsBefore;

  private final Map<String, Long> nodeCreated = new ConcurrentHashMap<>();
  private final Map<String, Long> nodeReady = new ConcurrentHashMap<>();
  private final Map<String, Long> notReadyLifted = new ConcurrentHashMap<>();
  private final Map<String, Long> unregisteredLifted = new ConcurrentHashMap<>();
  private final Map<String, Long> claimRegistered = new ConcurrentHashMap<>();
  private final Map<String, Long> claimInitialized = new ConcurrentHashMap<>();

  /** When the controller's Registration logged each claim registered and initialized. */
  private final Map<String, Long> loggedRegistered = new ConcurrentHashMap<>();

  private final Map<String, Long> loggedInitialized = new ConcurrentHashMap<>();
  private final List<Pass> passes = Collections.synchronizedList(new ArrayList<>());
  private final List<String> warnings = Collections.synchronizedList(new ArrayList<>());
  private PassBuilder current;
  private final List<Sample> samples = Collections.synchronizedList(new ArrayList<>());
  private final ScheduledExecutorService sampler =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "burst-trace-sampler");
            t.setDaemon(true);
            return t;
          });
  private final Appender appender = new Appender();
  private final Logger controllerLog = (Logger) LoggerFactory.getLogger(Controller.class);
  private final Logger registrationLog = (Logger) LoggerFactory.getLogger(Registration.class);
  private final Level controllerLevel;

  BurstTrace(long start, ControlPlane cluster) {
    this.start = start;
    this.cluster = cluster;
    this.managerRequestsBefore = managerRequests();
    appender.setContext(controllerLog.getLoggerContext());
    appender.start();
    controllerLevel = controllerLog.getLevel();
    controllerLog.setLevel(Level.DEBUG);
    // The pass lines go to this trace only; the controller's warnings are still printed (below).
    controllerLog.setAdditive(false);
    controllerLog.addAppender(appender);
    registrationLog.addAppender(appender);
    sampler.scheduleAtFixedRate(this::sample, 0, 500, TimeUnit.MILLISECONDS);
  }

  /** A Node as the benchmark's watch saw it. */
  void node(Node n) {
    long now = System.currentTimeMillis();
    String name = n.getMetadata().getName();
    nodeCreated.putIfAbsent(name, now);
    List<Taint> taints = n.getSpec().getTaints() == null ? List.of() : n.getSpec().getTaints();
    if (NodeReadiness.ready(n)) {
      nodeReady.putIfAbsent(name, now);
    }
    if (taints.stream().noneMatch(t -> NOT_READY_TAINT.equals(t.getKey()))) {
      notReadyLifted.putIfAbsent(name, now);
    }
    if (taints.stream().noneMatch(t -> WellKnown.UNREGISTERED_TAINT.equals(t.getKey()))) {
      unregisteredLifted.putIfAbsent(name, now);
    }
  }

  /** A NodeClaim as the benchmark's watch saw it. */
  void claim(NodeClaim c) {
    long now = System.currentTimeMillis();
    if (c.getStatus() == null) {
      return;
    }
    if (Conditions.isTrue(c.getStatus().conditions, Conditions.REGISTERED)) {
      claimRegistered.putIfAbsent(c.getMetadata().getName(), now);
    }
    if (Conditions.isTrue(c.getStatus().conditions, Conditions.INITIALIZED)) {
      claimInitialized.putIfAbsent(c.getMetadata().getName(), now);
    }
  }

  @Override
  public void close() {
    sampler.shutdownNow();
    controllerLog.detachAppender(appender);
    registrationLog.detachAppender(appender);
    controllerLog.setAdditive(true);
    controllerLog.setLevel(controllerLevel);
    appender.stop();
  }

  /** One claim's stages, epoch ms (0: not seen). */
  record Claim(String name, String node, long created, long launched, long delivered) {}

  /**
   * Prints the stage distributions, the slowest claims' timelines, the passes, the CPU and
   * kube-controller-manager's requests.
   */
  void report(String run, List<Claim> claims, Map<String, Long> podsBound) {
    List<Map<String, Long>> rows = new ArrayList<>();
    for (Claim c : claims) {
      Map<String, Long> r = new LinkedHashMap<>();
      String n = c.node();
      r.put("NodeClaim created", c.created());
      r.put("launched", c.launched());
      r.put("join delivered", c.delivered());
      r.put("Node created", at(nodeCreated, n));
      r.put("Node Ready", at(nodeReady, n));
      r.put("not-ready taint lifted (kube-controller-manager)", at(notReadyLifted, n));
      r.put("unregistered taint lifted (controller)", at(unregisteredLifted, n));
      r.put("controller: registered", at(loggedRegistered, c.name()));
      r.put("NodeClaim Registered", at(claimRegistered, c.name()));
      r.put("controller: initialized", at(loggedInitialized, c.name()));
      r.put("NodeClaim Initialized", at(claimInitialized, c.name()));
      rows.add(r);
    }
    System.out.printf(
        "%n%s: each stage, ms from the burst's first pod (%d claims)%n", run, rows.size());
    System.out.println("| stage | p50 | p90 | max |");
    System.out.println("|---|---|---|---|");
    for (String stage : rows.isEmpty() ? List.<String>of() : rows.get(0).keySet()) {
      distribution(stage, rows, r -> r.get(stage) == 0 ? null : r.get(stage) - start);
    }
    System.out.printf("%n%s: stage gaps per claim (ms)%n", run);
    System.out.println("| gap | p50 | p90 | max |");
    System.out.println("|---|---|---|---|");
    gap(rows, "join delivered → Node created", "join delivered", "Node created");
    gap(rows, "Node created → Ready", "Node created", "Node Ready");
    gap(
        rows,
        "Node created → not-ready lifted",
        "Node created",
        "not-ready taint lifted (kube-controller-manager)");
    gap(
        rows,
        "Node created → unregistered lifted",
        "Node created",
        "unregistered taint lifted (controller)");
    gap(rows, "Node created → controller: registered", "Node created", "controller: registered");
    gap(
        rows,
        "controller: registered → Registered seen",
        "controller: registered",
        "NodeClaim Registered");
    distribution(
        "initializable (Ready, both taints lifted) → controller: initialized",
        rows,
        r -> diff(initializable(r), r.get("controller: initialized")));
    gap(
        rows,
        "controller: initialized → Initialized seen",
        "controller: initialized",
        "NodeClaim Initialized");
    gap(rows, "Node created → Initialized", "Node created", "NodeClaim Initialized");
    long[] bound = podsBound.values().stream().mapToLong(b -> b - start).sorted().toArray();
    if (bound.length > 0) {
      System.out.printf(
          "| (pods bound by kube-scheduler, ms from the burst's first pod) | %d | %d | %d |%n",
          bound[(bound.length - 1) / 2],
          bound[(int) Math.ceil(bound.length * 0.9) - 1],
          bound[bound.length - 1]);
    }
    distribution(
        "which came last: not-ready lifted after unregistered (1 = yes)",
        rows,
        r ->
            r.get("not-ready taint lifted (kube-controller-manager)")
                    > r.get("unregistered taint lifted (controller)")
                ? 1L
                : 0L);

    List<Map<String, Long>> slowest = new ArrayList<>(rows);
    slowest.sort(
        Comparator.comparing((Map<String, Long> r) -> r.get("NodeClaim Initialized")).reversed());
    System.out.printf("%n%s: the slowest claims' timelines (ms from the burst's first pod)%n", run);
    List<String> stages = rows.isEmpty() ? List.of() : new ArrayList<>(rows.get(0).keySet());
    System.out.println("| claim | " + String.join(" | ", stages) + " |");
    System.out.println("|" + "---|".repeat(stages.size() + 1));
    for (int i = 0; i < Math.min(5, slowest.size()); i++) {
      Map<String, Long> r = slowest.get(i);
      String name = claims.get(rows.indexOf(r)).name();
      StringBuilder line = new StringBuilder("| " + name + " |");
      stages.forEach(
          s -> line.append(' ').append(r.get(s) == 0 ? "-" : r.get(s) - start).append(" |"));
      System.out.println(line);
    }

    System.out.printf("%n%s: per second from the burst's first pod — counts and CPU%n", run);
    buckets(rows);
    passes(run);
    manager(run);
    if (!warnings.isEmpty()) {
      System.out.printf(
          "%n%s: %d controller warnings during the burst, the first:%n", run, warnings.size());
      warnings.stream().limit(5).forEach(w -> System.out.println("  " + w));
    }
  }

  /**
   * kube-controller-manager's requests during the burst: its client's QPS limit (20 by default) is
   * what paces the not-ready taint's removal.
   */
  private void manager(String run) {
    Map<String, Long> after = managerRequests();
    System.out.printf("%n%s: kube-controller-manager's requests during the burst%n", run);
    System.out.println("| method, code | requests |");
    System.out.println("|---|---|");
    after.forEach(
        (k, v) -> {
          long n = v - managerRequestsBefore.getOrDefault(k, 0L);
          if (n > 0) {
            System.out.printf("| %s | %d |%n", k, n);
          }
        });
  }

  /** rest_client_requests_total of kube-controller-manager's metrics, by method and code. */
  private Map<String, Long> managerRequests() {
    Map<String, Long> requests = new TreeMap<>();
    var result =
        Commands.attempt(
            cluster
                .network()
                .enter(List.of("curl", "-s", "--max-time", "5", "http://127.0.0.1:10252/metrics")),
            Map.of(),
            10);
    result
        .output()
        .lines()
        .filter(l -> l.startsWith("rest_client_requests_total{"))
        .forEach(
            l -> {
              String labels = l.substring(l.indexOf('{') + 1, l.indexOf('}'));
              String code = label(labels, "code");
              String method = label(labels, "method");
              long n = (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1));
              requests.merge(method + ", " + code, n, Long::sum);
            });
    return requests;
  }

  private static String label(String labels, String name) {
    int at = labels.indexOf(name + "=\"");
    if (at < 0) {
      return "?";
    }
    int from = at + name.length() + 2;
    return labels.substring(from, labels.indexOf('"', from));
  }

  private static long at(Map<String, Long> times, String key) {
    return key == null ? 0 : times.getOrDefault(key, 0L);
  }

  private static Long diff(long from, long to) {
    return from == 0 || to == 0 ? null : to - from;
  }

  private static long initializable(Map<String, Long> r) {
    long ready = r.get("Node Ready");
    long notReady = r.get("not-ready taint lifted (kube-controller-manager)");
    long unregistered = r.get("unregistered taint lifted (controller)");
    return ready == 0 || notReady == 0 || unregistered == 0
        ? 0
        : Math.max(ready, Math.max(notReady, unregistered));
  }

  private static void gap(List<Map<String, Long>> rows, String title, String from, String to) {
    distribution(title, rows, r -> diff(r.get(from), r.get(to)));
  }

  private static void distribution(
      String title, List<Map<String, Long>> rows, Function<Map<String, Long>, Long> value) {
    long[] v =
        rows.stream()
            .map(value)
            .filter(x -> x != null)
            .mapToLong(Long::longValue)
            .sorted()
            .toArray();
    if (v.length == 0) {
      System.out.printf("| %s | - | - | - |%n", title);
      return;
    }
    System.out.printf(
        "| %s | %d | %d | %d |%s%n",
        title,
        v[(v.length - 1) / 2],
        v[(int) Math.ceil(v.length * 0.9) - 1],
        v[v.length - 1],
        v.length < rows.size() ? " (" + v.length + " of " + rows.size() + ")" : "");
  }

  /** Per 5 s: how many claims reached each stage, and where the CPU went. */
  private void buckets(List<Map<String, Long>> rows) {
    List<String> counted =
        List.of(
            "Node created",
            "not-ready taint lifted (kube-controller-manager)",
            "unregistered taint lifted (controller)",
            "NodeClaim Registered",
            "NodeClaim Initialized");
    long end =
        rows.stream().mapToLong(r -> r.get("NodeClaim Initialized")).max().orElse(start) - start;
    List<Sample> all = new ArrayList<>(samples);
    List<String> processes =
        new ArrayList<>(
            new TreeMap<>(all.isEmpty() ? Map.of() : all.get(all.size() - 1).children()).keySet());
    System.out.println(
        "| s | Nodes created | not-ready lifted | unregistered lifted | Registered | Initialized |"
            + " controller threads CPU % | JVM CPU % | "
            + String.join(" CPU % | ", processes)
            + " CPU % | heap MiB | GC ms |");
    System.out.println("|" + "---|".repeat(9 + processes.size()));
    for (long from = 0; from <= end; from += 5000) {
      long lo = start + from;
      long hi = lo + 5000;
      StringBuilder line =
          new StringBuilder("| " + from / 1000 + "–" + (from + 5000) / 1000 + " |");
      for (String stage : counted) {
        line.append(' ')
            .append(rows.stream().filter(r -> r.get(stage) >= lo && r.get(stage) < hi).count())
            .append(" |");
      }
      Sample a = sampleAt(all, lo);
      Sample b = sampleAt(all, hi);
      if (a == null || b == null || b.at() <= a.at()) {
        line.append(" - |".repeat(4 + processes.size()));
      } else {
        double wall = (b.at() - a.at()) * 1e6;
        line.append(
            String.format(
                " %.0f | %.0f |",
                100 * (b.reconcileCpu() - a.reconcileCpu()) / wall,
                100 * (b.jvmCpu() - a.jvmCpu()) / wall));
        for (String p : processes) {
          long ticks = b.children().getOrDefault(p, 0L) - a.children().getOrDefault(p, 0L);
          line.append(String.format(" %.0f |", 100 * ticks * TICK_NANOS / wall));
        }
        line.append(String.format(" %d | %d |", b.heapUsed() >> 20, b.gcMillis() - a.gcMillis()));
      }
      System.out.println(line);
    }
  }

  private static Sample sampleAt(List<Sample> all, long at) {
    Sample best = null;
    for (Sample s : all) {
      if (s.at() <= at || best == null) {
        best = s;
      }
    }
    return best;
  }

  /**
   * The passes of a second or more one by one, the shorter ones summed: where the reconcile
   * thread's time went, and how many claims each registered and initialized.
   */
  private void passes(String run) {
    List<Pass> all = new ArrayList<>(passes);
    System.out.printf(
        "%n%s: the controller's passes (%d; start ms from the burst's first pod, durations ms)%n",
        run, all.size());
    System.out.println(
        "| pass | start | NodeClaims | list | "
            + String.join(" | ", SHOWN_STEPS)
            + " | other steps | total | registered | initialized |");
    System.out.println("|" + "---|".repeat(SHOWN_STEPS.size() + 7));
    long[] shorter = new long[SHOWN_STEPS.size() + 5];
    long[] total = new long[SHOWN_STEPS.size() + 5];
    int shorterPasses = 0;
    for (int i = 0; i < all.size(); i++) {
      Pass p = all.get(i);
      long[] row = columns(p);
      for (int c = 0; c < row.length; c++) {
        total[c] += row[c];
      }
      if (p.end() - p.start() < 1000) {
        shorterPasses++;
        for (int c = 0; c < row.length; c++) {
          shorter[c] += row[c];
        }
        continue;
      }
      System.out.printf("| %d | %d | %d |%s%n", i, p.start() - start, p.listed(), cells(row));
    }
    System.out.printf("| %d shorter passes | | |%s%n", shorterPasses, cells(shorter));
    System.out.printf("| all %d | | |%s%n", all.size(), cells(total));
  }

  private static final List<String> SHOWN_STEPS =
      List.of("provisioning", "static nodepools", "disruption", "nodepool status");

  /** A pass's list, shown steps, other steps, total, registered and initialized. */
  private static long[] columns(Pass p) {
    long[] row = new long[SHOWN_STEPS.size() + 5];
    row[0] = p.listMillis();
    long other = p.steps().values().stream().mapToLong(Long::longValue).sum();
    for (int s = 0; s < SHOWN_STEPS.size(); s++) {
      row[s + 1] = p.steps().getOrDefault(SHOWN_STEPS.get(s), 0L);
      other -= row[s + 1];
    }
    row[SHOWN_STEPS.size() + 1] = other;
    row[SHOWN_STEPS.size() + 2] = p.end() - p.start();
    row[SHOWN_STEPS.size() + 3] = p.registered();
    row[SHOWN_STEPS.size() + 4] = p.initialized();
    return row;
  }

  private static String cells(long[] row) {
    StringBuilder line = new StringBuilder();
    for (long v : row) {
      line.append(' ').append(v).append(" |");
    }
    return line.toString();
  }

  private record Pass(
      long start,
      long end,
      int listed,
      long listMillis,
      Map<String, Long> steps,
      int registered,
      int initialized) {}

  private static final class PassBuilder {
    long start;
    int listed;
    long listMillis;
    final Map<String, Long> steps = new LinkedHashMap<>();
    int registered;
    int initialized;
  }

  private record Sample(
      long at,
      long reconcileCpu,
      long jvmCpu,
      long heapUsed,
      long gcMillis,
      Map<String, Long> children) {}

  private void sample() {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long reconcile = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (controllerThread(t.getName())) {
        reconcile += Math.max(0, threads.getThreadCpuTime(t.getId()));
      }
    }
    long jvm =
        ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    long gc =
        ManagementFactory.getGarbageCollectorMXBeans().stream()
            .mapToLong(GarbageCollectorMXBean::getCollectionTime)
            .sum();
    Map<String, Long> children = new TreeMap<>();
    ProcessHandle.current()
        .descendants()
        .forEach(
            p -> {
              long[] ticks = cpuTicks(p.pid());
              if (ticks != null) {
                children.merge(processName(p.pid()), ticks[0] + ticks[1], Long::sum);
              }
            });
    samples.add(
        new Sample(
            System.currentTimeMillis(),
            reconcile,
            jvm,
            ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(),
            gc,
            children));
  }

  /** The processes worth a column: the control plane's and PostgreSQL; the rest as "other". */
  private static String processName(long pid) {
    try {
      String comm = Files.readString(Path.of("/proc/" + pid + "/comm")).strip();
      return switch (comm) {
        case "etcd", "kube-apiserver", "kube-controller", "kube-scheduler", "postgres" -> comm;
        default -> "other";
      };
    } catch (IOException e) {
      return "other";
    }
  }

  private static long[] cpuTicks(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12])}; // utime, stime
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Reads the controller's pass lines and Registration's lines. */
  private final class Appender extends AppenderBase<ILoggingEvent> {
    @Override
    protected void append(ILoggingEvent e) {
      long now = e.getTimeStamp();
      String message = e.getMessage();
      Object[] args = e.getArgumentArray();
      if (e.getLevel().isGreaterOrEqual(Level.WARN)) {
        warnings.add(e.getLoggerName() + ": " + e.getFormattedMessage());
        if (e.getLoggerName().equals(Controller.class.getName())) {
          System.out.println("WARN " + e.getFormattedMessage());
        }
        return;
      }
      synchronized (BurstTrace.this) {
        if (message.startsWith("Pass: {} NodeClaims read")) {
          current = new PassBuilder();
          current.listed = ((Number) args[0]).intValue();
          current.listMillis = ((Number) args[1]).longValue();
          current.start = now - current.listMillis;
        } else if (message.startsWith("Step ") && current != null) {
          current.steps.put((String) args[0], ((Number) args[1]).longValue());
        } else if (message.startsWith("Pass: done") && current != null) {
          passes.add(
              new Pass(
                  current.start,
                  now,
                  current.listed,
                  current.listMillis,
                  current.steps,
                  current.registered,
                  current.initialized));
          current = null;
        } else if (message.startsWith("NodeClaim {} registered")) {
          loggedRegistered.putIfAbsent((String) args[0], now);
          if (current != null) {
            current.registered++;
          }
        } else if (message.startsWith("NodeClaim {} initialized")) {
          loggedInitialized.putIfAbsent((String) args[0], now);
          if (current != null) {
            current.initialized++;
          }
        }
      }
    }
  }
}
