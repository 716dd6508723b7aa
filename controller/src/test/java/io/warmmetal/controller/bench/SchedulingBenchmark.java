package io.warmmetal.controller.bench;

import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.NodePoolView;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.scheduling.Scheduler;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * How long the scheduler takes to decide nodes for N pending pods over S instance types (defaults:
 * 10,000 pods, 400 types, 3 NodePools). Prints the median of several runs after warm-up; asserts
 * nothing.
 *
 * <pre>mvn -B -q -pl controller test-compile exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.warmmetal.controller.bench.SchedulingBenchmark -Dexec.args="10000 400"
 * </pre>
 */
public final class SchedulingBenchmark {
  private static final long GIB = 1L << 30;

  public static void main(String[] args) {
    int podCount = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    int typeCount = args.length > 1 ? Integer.parseInt(args[1]) : 400;
    Random random = new Random(42);
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
              random.nextInt(20)));
    }
    List<NodePoolView> pools =
        List.of(
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
    List<PodRequest> pods = new ArrayList<>();
    for (int i = 0; i < podCount; i++) {
      Resources req =
          Resources.of(100L * (1 + random.nextInt(40)), GIB / 4 * (1 + random.nextInt(32)));
      if (random.nextInt(50) == 0) {
        req = req.with("nvidia.com/gpu", 1);
      }
      Map<String, String> selector =
          random.nextInt(10) == 0 ? Map.of("kubernetes.io/arch", "arm64") : Map.of();
      pods.add(new PodRequest("pod-" + i, req, selector, List.of(), List.of()));
    }
    Scheduler scheduler = new Scheduler(Resources.of(200, GIB / 2));
    for (int i = 0; i < 3; i++) {
      scheduler.schedule(pods, pools, types); // warm-up
    }
    long[] runs = new long[5];
    Scheduler.Plan plan = null;
    for (int i = 0; i < runs.length; i++) {
      long t0 = System.nanoTime();
      plan = scheduler.schedule(pods, pools, types);
      runs[i] = System.nanoTime() - t0;
    }
    Arrays.sort(runs);
    System.out.println(
        "| pending pods | instance types | NodePools | nodes planned | unschedulable | median time |");
    System.out.println("|---|---|---|---|---|---|");
    System.out.printf(
        "| %d | %d | %d | %d | %d | %.0f ms |%n",
        podCount,
        typeCount,
        pools.size(),
        plan.nodes().size(),
        plan.unschedulable().size(),
        runs[runs.length / 2] / 1e6);
    System.out.printf(
        "(%d cores, %s)%n",
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
  }
}
