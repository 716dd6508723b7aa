package io.warmmetal.agent.commands;

import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.channel.Result;

/** How a command ended. */
public record Outcome(boolean succeeded, String message) {
  public static Outcome ok(String message) {
    return new Outcome(true, message);
  }

  public static Outcome failed(String message) {
    return new Outcome(false, message);
  }

  /** The result frame that reports this outcome of {@code command}. */
  public Result of(Command command) {
    return succeeded
        ? Result.succeeded(command.id(), message)
        : Result.failed(command.id(), message);
  }
}
