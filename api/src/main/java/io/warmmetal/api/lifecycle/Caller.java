package io.warmmetal.api.lifecycle;

/**
 * Who asks: the API token's id, its name (events say who did what) and the project it acts in —
 * where its launches go (their client tokens are unique within it) and all of instances it may
 * touch; null for an operator acting across every project (never for a launch). {@code operator}:
 * its role reaches across projects (admin, fleet-reader), so it sees every shape, also one the
 * project's quota closes.
 */
public record Caller(String tokenId, String name, String project, boolean operator) {

  /** Whether an instance of {@code project} is this caller's to see and change. */
  public boolean reaches(String project) {
    return this.project == null || this.project.equals(project);
  }
}
