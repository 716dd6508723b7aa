package io.warmmetal.agent;

import io.vertx.core.Vertx;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.commands.ScriptExecutor;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** How the agent runs commands: the scripts, or (for demos and the boot test) a simulation. */
final class ExecutorOptions {
  @Option(
      names = "--simulate",
      defaultValue = "${env:WARMMETAL_AGENT_SIMULATE:-false}",
      description = "simulate commands instead of running the scripts (WARMMETAL_AGENT_SIMULATE)")
  boolean simulate;

  @Mixin SimulationOptions simulation = new SimulationOptions();

  @Option(
      names = "--scripts-dir",
      description = "the prepare/join/reset/reboot scripts (default: the shipped ones)")
  Path scriptsDir;

  @Option(
      names = "--command-timeout",
      defaultValue = "PT30M",
      description = "how long a script may run (ISO-8601)")
  Duration commandTimeout;

  Executor executor(Vertx vertx, Path stateDir) throws IOException {
    if (simulate) {
      return simulation.executor(vertx, new Random());
    }
    Path scripts =
        scriptsDir != null
            ? scriptsDir
            : ScriptExecutor.installShipped(stateDir.resolve("scripts"));
    return new ScriptExecutor(vertx, scripts, commandTimeout);
  }
}
