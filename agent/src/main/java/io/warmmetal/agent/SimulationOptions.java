package io.warmmetal.agent;

import io.vertx.core.Vertx;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.SimulatedExecutor;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import picocli.CommandLine.Option;

/**
 * How simulated commands behave: the agent's {@code --simulate} and every agent of the fleet
 * simulator.
 */
public final class SimulationOptions {
  @Option(
      names = "--durations",
      defaultValue = "prepare=uniform:2s:5s,join=fixed:1s,reset=uniform:3s:8s,reboot=fixed:5s",
      description =
          "simulated durations per command: kind=fixed:2s | uniform:1s:3s | triangular:1s:2s:6s, comma-separated")
  String durations;

  @Option(
      names = "--failure-rate",
      defaultValue = "0",
      description = "probability that a simulated step fails")
  double failureRate;

  /** A simulation of the commands that leaves the host alone. */
  public SimulatedExecutor executor(Vertx vertx, Random random) {
    return new SimulatedExecutor(vertx, parseDurations(durations), failureRate, random);
  }

  static Map<String, Distribution> parseDurations(String spec) {
    Map<String, Distribution> out = new HashMap<>();
    for (String part : spec.split(",")) {
      String[] kv = part.split("=", 2);
      if (kv.length != 2) {
        throw new IllegalArgumentException(
            "--durations: expected kind=distribution, got '" + part + "'");
      }
      out.put(kv[0].trim(), Distribution.parse(kv[1]));
    }
    return out;
  }
}
