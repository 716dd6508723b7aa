package io.warmmetal.agent.commands;

/** How a command ended. */
public record Outcome(boolean succeeded, String message) {
  public static Outcome ok(String message) {
    return new Outcome(true, message);
  }

  public static Outcome failed(String message) {
    return new Outcome(false, message);
  }
}
