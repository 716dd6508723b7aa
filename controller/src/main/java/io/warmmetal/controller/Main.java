package io.warmmetal.controller;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.metrics.MetricsServer;
import io.warmmetal.controller.scheduling.Resources;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code java -jar warmmetal-controller.jar}: the controller in a cluster (in-cluster credentials,
 * or the kubeconfig of {@code KUBECONFIG} / {@code ~/.kube/config}). Replicas elect one leader with
 * a Lease. Flags fall back to {@code WARMMETAL_CONTROLLER_*} environment variables.
 */
@Command(
    name = "warmmetal-controller",
    mixinStandardHelpOptions = true,
    version = "WarmMetal controller 0.1.0",
    description =
        "Provisions nodes for pending pods from WarmMetal's warm pools (Karpenter's NodePool API).")
public final class Main implements Callable<Integer> {
  @Option(
      names = "--namespace",
      defaultValue = "${env:WARMMETAL_CONTROLLER_NAMESPACE:-warmmetal-system}",
      description = "where the leader-election Lease lives")
  String namespace;

  @Option(
      names = "--batch-idle",
      defaultValue = "${env:WARMMETAL_CONTROLLER_BATCH_IDLE:-PT0.005S}",
      description = "decide once events have paused this long (ISO-8601; Karpenter: 1 s)")
  Duration batchIdle;

  @Option(
      names = "--batch-max",
      defaultValue = "${env:WARMMETAL_CONTROLLER_BATCH_MAX:-PT0.1S}",
      description =
          "decide at the latest this long after the first event (ISO-8601; Karpenter: 10 s)")
  Duration batchMax;

  @Option(
      names = "--launch-parallelism",
      defaultValue = "${env:WARMMETAL_CONTROLLER_LAUNCH_PARALLELISM:-32}",
      description =
          "NodeClaims created at once by a pass, and NodeClaims whose lifecycle (launch,"
              + " registration, initialization) is reconciled at once")
  int launchParallelism;

  @Option(
      names = "--nudge-pods",
      negatable = true,
      defaultValue = "${env:WARMMETAL_CONTROLLER_NUDGE_PODS:-true}",
      fallbackValue = "true",
      description =
          "touch a pending pod when the node planned for it is initialized, so kube-scheduler tries it"
              + " at once instead of after its backoff (helps up to Kubernetes 1.20)")
  boolean nudgePods;

  @Option(
      names = "--standby-unhealthy-after",
      defaultValue = "${env:WARMMETAL_CONTROLLER_STANDBY_UNHEALTHY_AFTER:-PT2M}",
      description =
          "how long a pre-joined standby node may be NotReady (or missing) before its machine is reset"
              + " and another joined (ISO-8601)")
  Duration standbyUnhealthyAfter;

  @Option(
      names = "--shapes-refresh",
      defaultValue = "${env:WARMMETAL_CONTROLLER_SHAPES_REFRESH:-PT1S}",
      description =
          "how often each node class's shapes (instance types and their free machines) are read"
              + " again in the background; plans read them from memory (ISO-8601)")
  Duration shapesRefresh;

  @Option(
      names = "--reserved-cpu",
      defaultValue = "${env:WARMMETAL_CONTROLLER_RESERVED_CPU_MILLI:-100}",
      description =
          "CPU (millicores) every node keeps from pods besides its DaemonSets (kubelet, system)")
  long reservedCpu;

  @Option(
      names = "--reserved-memory-mib",
      defaultValue = "${env:WARMMETAL_CONTROLLER_RESERVED_MEMORY_MIB:-512}",
      description =
          "memory (MiB) every node keeps from pods besides its DaemonSets (kernel, kubelet, eviction)")
  long reservedMemoryMiB;

  @Option(
      names = "--min-values-policy",
      defaultValue = "${env:WARMMETAL_CONTROLLER_MIN_VALUES_POLICY:-Strict}",
      description =
          "Strict: a NodePool whose instance types cannot meet a requirement's minValues gets no"
              + " node; BestEffort: it gets one, its NodeClaim's minValues relaxed (as upstream's)")
  MinValuesPolicy minValuesPolicy;

  /** Upstream's {@code --min-values-policy}. */
  enum MinValuesPolicy {
    Strict,
    BestEffort
  }

  @Option(
      names = "--feature-gates",
      defaultValue =
          "${env:WARMMETAL_CONTROLLER_FEATURE_GATES:-NodeRepair=false,NodeOverlay=false}",
      description =
          "upstream's feature gates, Name=true|false comma separated: NodeRepair (replace unhealthy"
              + " nodes), NodeOverlay (NodeOverlays' prices and capacity); off by default")
  String featureGates;

  @Option(
      names = "--metrics-port",
      defaultValue = "${env:WARMMETAL_CONTROLLER_METRICS_PORT:-8080}",
      description =
          "port of /metrics (Prometheus, Karpenter's metric names), /healthz and /readyz; 0: none")
  int metricsPort;

  @Option(
      names = "--metrics-host",
      defaultValue = "${env:WARMMETAL_CONTROLLER_METRICS_HOST:-0.0.0.0}",
      description = "address the metrics endpoint listens on")
  String metricsHost;

  public static void main(String[] args) {
    if (System.getProperty("logback.configurationFile") == null) {
      System.setProperty(
          "logback.configurationFile",
          "logback-controller.xml"); // apart from the API's logback.xml
    }
    System.exit(new CommandLine(new Main()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    KubernetesClient kube =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder(Config.autoConfigure(null))
                    .withUserAgent(Controller.USER_AGENT)
                    .build())
            .build();
    String identity = Leadership.identity(System.getenv());
    Resources reserve = Resources.of(reservedCpu, reservedMemoryMiB << 20);
    FeatureGates gates;
    try {
      gates = FeatureGates.parse(featureGates);
    } catch (IllegalArgumentException bad) {
      throw new CommandLine.ParameterException(
          new CommandLine(this), "--feature-gates: " + bad.getMessage());
    }
    KarpenterMetrics metrics =
        new KarpenterMetrics(); // one per process: counts survive a change of leader
    AtomicReference<Controller> running = new AtomicReference<>();
    AtomicBoolean electing = new AtomicBoolean(true);
    MetricsServer server =
        metricsPort == 0
            ? null
            : MetricsServer.start(metricsHost, metricsPort, metrics, electing::get);
    var election =
        Leadership.run(
            kube,
            namespace,
            "warmmetal-controller",
            identity,
            Leadership.Timing.DEFAULT,
            () -> {
              Controller controller =
                  new Controller(
                      kube,
                      new Controller.Settings(
                          batchIdle,
                          batchMax,
                          reserve,
                          launchParallelism,
                          nudgePods,
                          standbyUnhealthyAfter,
                          shapesRefresh,
                          minValuesPolicy == MinValuesPolicy.BestEffort,
                          gates),
                      metrics);
              running.set(controller);
              controller.start();
            },
            () -> {
              Controller controller = running.getAndSet(null);
              if (controller != null) {
                controller.close();
              }
            });
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> election.cancel(true), "warmmetal-controller-shutdown"));
    try {
      election.join();
    } catch (CancellationException stopped) {
      // shutting down
    } finally {
      electing.set(false);
      if (server != null) {
        server.close();
      }
    }
    return 0;
  }
}
