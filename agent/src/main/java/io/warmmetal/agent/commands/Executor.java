package io.warmmetal.agent.commands;

import io.vertx.core.Future;
import io.warmmetal.protocol.channel.Command;
import java.util.function.BiConsumer;

/**
 * Runs commands: the real scripts, or a simulation with the same steps. Never blocks an event loop.
 */
public interface Executor {
  /**
   * Runs the command, reporting each step as it starts ({@code progress.accept(step, message)}).
   */
  Future<Outcome> run(Command command, BiConsumer<String, String> progress);
}
