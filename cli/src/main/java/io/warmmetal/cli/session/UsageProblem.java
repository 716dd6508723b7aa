package io.warmmetal.cli.session;

/**
 * Something the user must fix in how they called the tool (exit 2), found after picocli's own
 * parsing.
 */
public final class UsageProblem extends RuntimeException {
  public UsageProblem(String message) {
    super(message);
  }
}
