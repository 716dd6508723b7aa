package io.warmmetal.controller.bench;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.NodePoolView;
import io.warmmetal.controller.scheduling.Placement;
import io.warmmetal.controller.scheduling.PodAffinityTerm;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.scheduling.SpreadConstraint;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * How long the scheduler takes to decide nodes for N pending pods over S instance types (defaults:
 * 10,000 pods, 400 types in 3 zones, 3 NodePools), for several mixes of pods: plain ones (requests,
 * some an arch selector, some a GPU), and mixes where a share of the pods are replicas of
 * Deployments with pod anti-affinity (hostname, zone), topology spread (zone, hostname) or
 * preferences. Prints, per mix, the median of several runs after warm-up and a fingerprint of the
 * plan (the same fingerprint: the same plan — how a change to the scheduler shows it decides as
 * before); asserts nothing.
 *
 * <pre>mvn -B -q -pl controller test-compile exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.warmmetal.controller.bench.SchedulingBenchmark \
 *   -Dexec.args="10000 400 5 mixed"
 * </pre>
 *
 * Arguments: pods, types, timed runs (after as many warm-ups, at most 3), and the mixes to run
 * (comma-separated names; all by default).
 */
public final class SchedulingBenchmark {
  private static final long GIB = 1L << 30;
  private static final List<String> ZONES = List.of("zone-a", "zone-b", "zone-c");

  /** What a Deployment's replicas ask of where they go. */
  private enum Kind {
    /** Independent pods: requests, 1 in 10 an arm64 selector, 1 in 50 a GPU. */
    PLAIN,
    /** Required anti-affinity to their own replicas on the hostname: one a node. */
    HOSTNAME_ANTI_AFFINITY,
    /** Required anti-affinity to their own replicas on the zone: three replicas, one a zone. */
    ZONE_ANTI_AFFINITY,
    /** Zone spread, maxSkew 1, DoNotSchedule. */
    ZONE_SPREAD,
    /** Hostname spread maxSkew 1 DoNotSchedule and zone spread maxSkew 1 ScheduleAnyway. */
    HOSTNAME_SPREAD,
    /** Preferred anti-affinity to their own replicas on the hostname (a Helm chart's default). */
    PREFERRED_ANTI_AFFINITY,
    /** Preferred affinity to another Deployment's pods in the same zone (near a cache). */
    PREFERRED_AFFINITY
  }

  /** A mix: its name and the share of pods of each kind (the rest plain). */
  private record Mix(String name, Map<Kind, Double> shares) {}

  private static final List<Mix> MIXES =
      List.of(
          new Mix("plain", Map.of()),
          new Mix(
              "anti-affinity",
              Map.of(Kind.HOSTNAME_ANTI_AFFINITY, 0.30, Kind.ZONE_ANTI_AFFINITY, 0.05)),
          new Mix("spread", Map.of(Kind.ZONE_SPREAD, 0.20, Kind.HOSTNAME_SPREAD, 0.10)),
          new Mix(
              "preferred",
              Map.of(Kind.PREFERRED_ANTI_AFFINITY, 0.20, Kind.PREFERRED_AFFINITY, 0.10)),
          new Mix(
              "mixed",
              Map.of(
                  Kind.HOSTNAME_ANTI_AFFINITY, 0.15,
                  Kind.ZONE_ANTI_AFFINITY, 0.05,
                  Kind.ZONE_SPREAD, 0.10,
                  Kind.HOSTNAME_SPREAD, 0.05,
                  Kind.PREFERRED_ANTI_AFFINITY, 0.10,
                  Kind.PREFERRED_AFFINITY, 0.05)));

  public static void main(String[] args) {
    int podCount = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    int typeCount = args.length > 1 ? Integer.parseInt(args[1]) : 400;
    int runCount = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    Set<String> only = args.length > 3 ? Set.of(args[3].split(",")) : null;
    List<InstanceType> types = types(typeCount);
    List<NodePoolView> pools = pools();
    Scheduler scheduler = new Scheduler(Resources.of(200, GIB / 2));
    System.out.println(
        "| mix | pending pods | instance types | NodePools | nodes planned | unschedulable"
            + " | median time | median CPU time | plan |");
    System.out.println("|---|---|---|---|---|---|---|---|---|");
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    for (Mix mix : MIXES) {
      if (only != null && !only.contains(mix.name())) {
        continue;
      }
      List<PodRequest> pods = pods(mix, podCount);
      for (int i = 0; i < Math.min(3, runCount); i++) {
        scheduler.schedule(pods, pools, types); // warm-up
      }
      long[] runs = new long[runCount];
      long[] cpu = new long[runCount];
      Scheduler.Plan plan = null;
      for (int i = 0; i < runs.length; i++) {
        long c0 = threads.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        plan = scheduler.schedule(pods, pools, types);
        runs[i] = System.nanoTime() - t0;
        cpu[i] = threads.getCurrentThreadCpuTime() - c0;
      }
      Arrays.sort(runs);
      Arrays.sort(cpu);
      System.out.printf(
          "| %s | %d | %d | %d | %d | %d | %.0f ms | %.0f ms | %08x |%n",
          mix.name(),
          podCount,
          typeCount,
          pools.size(),
          plan.nodes().size(),
          plan.unschedulable().size(),
          runs[runs.length / 2] / 1e6,
          cpu[cpu.length / 2] / 1e6,
          fingerprint(plan));
    }
    System.out.printf(
        "(%d cores, %s)%n",
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
  }

  /** Types of 2–128 CPUs, 1 in 10 with GPUs, a quarter arm64, each in every zone. */
  private static List<InstanceType> types(int typeCount) {
    Random random = new Random(42);
    Random offerings = new Random(7);
    List<InstanceType> types = new ArrayList<>();
    for (int i = 0; i < typeCount; i++) {
      int cpus = 2 << random.nextInt(7); // 2..128
      int memGiB = cpus * (2 << random.nextInt(3)); // 4..16 GiB per cpu
      int gpus = random.nextInt(10) == 0 ? 1 << random.nextInt(4) : 0;
      String arch = random.nextInt(4) == 0 ? "arm64" : "amd64";
      String name =
          "t"
              + i
              + "-"
              + arch
              + "-"
              + cpus
              + "c-"
              + memGiB
              + "g"
              + (gpus > 0 ? "-" + gpus + "g" : "");
      Resources alloc = Resources.of(cpus * 1000L, memGiB * GIB);
      if (gpus > 0) {
        alloc = alloc.with("nvidia.com/gpu", gpus);
      }
      int warm = random.nextInt(20);
      List<InstanceType.Offering> where = new ArrayList<>();
      int warmLeft = warm;
      for (String zone : ZONES) {
        int warmHere = zone.equals(ZONES.get(ZONES.size() - 1)) ? warmLeft : warmLeft / 2;
        warmLeft -= warmHere;
        where.add(
            new InstanceType.Offering(
                zone, "region-1", warmHere + offerings.nextInt(30), warmHere));
      }
      types.add(
          new InstanceType(
              name,
              Map.of(
                  "node.kubernetes.io/instance-type",
                  name,
                  "kubernetes.io/arch",
                  arch,
                  "karpenter.sh/capacity-type",
                  "on-demand",
                  "warmmetal.io/cpu",
                  String.valueOf(cpus)),
              alloc,
              cpus * 0.05 + gpus * 2.0 + random.nextDouble() * 0.01,
              warm,
              where));
    }
    return types;
  }

  private static List<NodePoolView> pools() {
    return List.of(
        new NodePoolView(
            "gpu",
            50,
            Map.of(),
            List.of(new Requirement("kubernetes.io/arch", "In", List.of("amd64"))),
            List.of(),
            null),
        new NodePoolView(
            "general",
            10,
            Map.of(),
            List.of(),
            List.of(),
            Resources.of(2_000_000_000L, Long.MAX_VALUE / 4)),
        new NodePoolView(
            "arm",
            1,
            Map.of("team", "arm"),
            List.of(new Requirement("kubernetes.io/arch", "In", List.of("arm64"))),
            List.of(),
            null));
  }

  /**
   * The mix's pods: for each kind its share, as Deployments of a few replicas alike; the rest
   * plain; Deployments in random order.
   */
  private static List<PodRequest> pods(Mix mix, int podCount) {
    Random random = new Random(42);
    List<List<PodRequest>> deployments = new ArrayList<>();
    List<String> targets = new ArrayList<>(); // apps a preferred affinity may be drawn to
    int constrained = 0;
    int app = 0;
    for (Kind kind : Kind.values()) {
      int wanted = (int) (podCount * mix.shares().getOrDefault(kind, 0.0));
      for (int made = 0; made < wanted; app++) {
        int replicas =
            Math.min(
                wanted - made,
                switch (kind) {
                  case ZONE_ANTI_AFFINITY -> ZONES.size();
                  case ZONE_SPREAD -> 3 + random.nextInt(28);
                  case HOSTNAME_SPREAD -> 2 + random.nextInt(19);
                  default -> 2 + random.nextInt(9);
                });
        String name = "app-" + app;
        Placement placement = placement(kind, name, targets, random);
        PodRequest template =
            plain(name, random)
                .withIdentity("default", Map.of("app", name))
                .withPlacement(placement);
        if (kind == Kind.HOSTNAME_ANTI_AFFINITY || kind == Kind.ZONE_ANTI_AFFINITY) {
          template =
              template.withAntiAffinity(
                  List.of(
                      term(
                          name,
                          kind == Kind.ZONE_ANTI_AFFINITY
                              ? WellKnown.ZONE_LABEL
                              : PodAffinityTerm.HOSTNAME)));
        }
        List<PodRequest> replicaPods = new ArrayList<>();
        for (int r = 0; r < replicas; r++) {
          replicaPods.add(rename(template, name + "-" + r));
        }
        deployments.add(replicaPods);
        if (kind == Kind.HOSTNAME_ANTI_AFFINITY || kind == Kind.ZONE_SPREAD) {
          targets.add(name);
        }
        made += replicas;
      }
      constrained += wanted;
    }
    for (int i = constrained; i < podCount; i++) {
      deployments.add(List.of(plain("pod-" + i, random)));
    }
    Collections.shuffle(deployments, random);
    return deployments.stream().flatMap(List::stream).toList();
  }

  private static Placement placement(Kind kind, String app, List<String> targets, Random random) {
    return switch (kind) {
      case ZONE_SPREAD ->
          new Placement(
              List.of(),
              List.of(),
              List.of(),
              List.of(),
              List.of(spread(app, WellKnown.ZONE_LABEL, true)));
      case HOSTNAME_SPREAD ->
          new Placement(
              List.of(),
              List.of(),
              List.of(),
              List.of(),
              List.of(
                  spread(app, PodAffinityTerm.HOSTNAME, true),
                  spread(app, WellKnown.ZONE_LABEL, false)));
      case PREFERRED_ANTI_AFFINITY ->
          new Placement(
              List.of(),
              List.of(),
              List.of(term(app, PodAffinityTerm.HOSTNAME)),
              List.of(),
              List.of());
      case PREFERRED_AFFINITY ->
          targets.isEmpty()
              ? Placement.NONE
              : new Placement(
                  List.of(),
                  List.of(term(targets.get(random.nextInt(targets.size())), WellKnown.ZONE_LABEL)),
                  List.of(),
                  List.of(),
                  List.of());
      default -> Placement.NONE;
    };
  }

  private static PodAffinityTerm term(String app, String key) {
    LabelSelector selector = new LabelSelectorBuilder().addToMatchLabels("app", app).build();
    return new PodAffinityTerm(selector, Set.of("default"), key);
  }

  private static SpreadConstraint spread(String app, String key, boolean required) {
    return new SpreadConstraint(term(app, key), 1, null, required, true, false);
  }

  /** A pod of 0.1–4 CPUs and 0.25–8 GiB; 1 in 50 a GPU, 1 in 10 an arm64 selector. */
  private static PodRequest plain(String name, Random random) {
    Resources req =
        Resources.of(100L * (1 + random.nextInt(40)), GIB / 4 * (1 + random.nextInt(32)));
    if (random.nextInt(50) == 0) {
      req = req.with("nvidia.com/gpu", 1);
    }
    Map<String, String> selector =
        random.nextInt(10) == 0 ? Map.of("kubernetes.io/arch", "arm64") : Map.of();
    return new PodRequest(name, req, selector, List.of(), List.of());
  }

  private static PodRequest rename(PodRequest pod, String name) {
    return new PodRequest(
        name,
        pod.requests(),
        pod.nodeSelector(),
        pod.affinityTerms(),
        pod.tolerations(),
        pod.hostPorts(),
        pod.namespace(),
        pod.labels(),
        pod.antiAffinity(),
        pod.placement());
  }

  /**
   * A hash of the plan: each node's pool, type, zone and pods in order, and the pods left over. The
   * same plan, the same number.
   */
  private static int fingerprint(Scheduler.Plan plan) {
    List<Object> parts = new ArrayList<>();
    for (Scheduler.PlannedNode node : plan.nodes()) {
      parts.add(node.pool().name());
      parts.add(node.type().name());
      parts.add(String.valueOf(node.labels().get(WellKnown.ZONE_LABEL)));
      parts.add(node.pods().stream().map(PodRequest::name).toList());
    }
    parts.add(plan.unschedulable().stream().map(PodRequest::name).toList());
    return parts.hashCode();
  }
}
