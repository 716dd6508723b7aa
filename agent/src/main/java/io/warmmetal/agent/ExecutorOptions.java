package io.warmmetal.agent;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.commands.ScriptExecutor;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.commands.SimulatedKubelet;
import io.warmmetal.agent.commands.SimulatedNodes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import picocli.CommandLine.Option;

/** How commands are run: real scripts, or a simulation. Shared by the agent and the fleet simulator. */
final class ExecutorOptions {
  @Option(names = "--simulate", defaultValue = "${env:WARMMETAL_AGENT_SIMULATE:-false}",
      description = "simulate commands instead of running the scripts (WARMMETAL_AGENT_SIMULATE)")
  boolean simulate;

  @Option(names = "--durations", defaultValue = "prepare=uniform:2s:5s,join=fixed:1s,reset=uniform:3s:8s,reboot=fixed:5s",
      description = "simulated durations per command: kind=fixed:2s | uniform:1s:3s | triangular:1s:2s:6s, comma-separated")
  String durations;

  @Option(names = "--failure-rate", defaultValue = "0", description = "probability that a simulated step fails")
  double failureRate;

  @Option(names = "--scripts-dir", description = "the prepare/join/reset/reboot scripts (default: the shipped ones)")
  Path scriptsDir;

  @Option(names = "--command-timeout", defaultValue = "PT30M", description = "how long a script may run (ISO-8601)")
  Duration commandTimeout;

  @Option(names = "--kubeconfig", description = "with --simulate: act as a kubelet, registering a Node in this cluster")
  Path kubeconfig;

  private SimulatedNodes nodes;

  /**
   * The executor for one agent.
   *
   * @param nodeName the Node a simulated kubelet registers
   * @param facts    the machine's facts, for the Node's capacity
   */
  Executor executor(Vertx vertx, Path stateDir, Random random, String nodeName, JsonObject facts)
      throws IOException {
    if (simulate) {
      Executor simulation = new SimulatedExecutor(vertx, parseDurations(durations), failureRate, random);
      return kubeconfig == null ? simulation : new SimulatedKubelet(vertx, simulation, nodes(), nodeName, facts);
    }
    Path scripts = scriptsDir != null ? scriptsDir : ScriptExecutor.installShipped(stateDir.resolve("scripts"));
    return new ScriptExecutor(vertx, scripts, commandTimeout);
  }

  /** One client, one pod watch and one heartbeat timer for all the simulated kubelets of this JVM. */
  private synchronized SimulatedNodes nodes() throws IOException {
    if (nodes == null) {
      KubernetesClient kube = new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(
          Files.readString(kubeconfig))).build();
      nodes = new SimulatedNodes(kube);
    }
    return nodes;
  }

  static Map<String, Distribution> parseDurations(String spec) {
    Map<String, Distribution> out = new HashMap<>();
    for (String part : spec.split(",")) {
      String[] kv = part.split("=", 2);
      if (kv.length != 2) {
        throw new IllegalArgumentException("--durations: expected kind=distribution, got '" + part + "'");
      }
      out.put(kv[0].trim(), Distribution.parse(kv[1]));
    }
    return out;
  }
}
