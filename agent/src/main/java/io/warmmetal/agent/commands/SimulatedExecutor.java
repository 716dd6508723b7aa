package io.warmmetal.agent.commands;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.commands.CommandKind;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BiConsumer;

/**
 * The real executor's state machine without touching the host: each step of each command takes a
 * duration drawn from its distribution and fails with the configured probability. For tests, demos
 * and benchmarks.
 */
public final class SimulatedExecutor implements Executor {
  /** The steps each command runs, as the real scripts do. */
  static final Map<CommandKind, List<String>> STEPS =
      Map.of(
          CommandKind.PREPARE, List.of("container-runtime", "kubelet", "images", "disks"),
          CommandKind.JOIN, List.of("kubeadm-join"),
          CommandKind.RESET,
              List.of("kubeadm-reset", "wipe", "container-runtime", "kubelet", "images", "disks"),
          CommandKind.REBOOT, List.of("reboot"));

  private final Vertx vertx;
  private final Map<String, Distribution> durations;
  private final double failureRate;
  private final Random random;

  /**
   * @param durations per command kind, the duration of the whole command (spread evenly over its
   *     steps)
   * @param failureRate probability that a step fails
   */
  public SimulatedExecutor(
      Vertx vertx, Map<String, Distribution> durations, double failureRate, Random random) {
    this.vertx = vertx;
    this.durations = durations;
    this.failureRate = failureRate;
    this.random = random;
  }

  @Override
  public Future<Outcome> run(Command command, BiConsumer<String, String> progress) {
    List<String> steps = STEPS.get(command.kind());
    long total =
        durations.getOrDefault(command.kind().wire(), Distribution.fixed(0)).sampleMs(random);
    return step(steps, 0, total / steps.size(), progress);
  }

  private Future<Outcome> step(
      List<String> steps, int i, long stepMs, BiConsumer<String, String> progress) {
    if (i == steps.size()) {
      return Future.succeededFuture(Outcome.ok("simulated"));
    }
    String step = steps.get(i);
    progress.accept(step, "simulated");
    Promise<Void> done = Promise.promise();
    if (stepMs <= 0) {
      done.complete();
    } else {
      vertx.setTimer(stepMs, t -> done.complete());
    }
    return done.future()
        .compose(
            x ->
                random.nextDouble() < failureRate
                    ? Future.succeededFuture(Outcome.failed("simulated failure in step " + step))
                    : step(steps, i + 1, stepMs, progress));
  }
}
