package io.warmmetal.api.lifecycle;

/**
 * Who asks: the API token's id (client tokens are scoped by it), its name (events say who did what) and the project
 * it acts in — where its launches go and all of instances it may touch; null for an operator acting across every
 * project (never for a launch).
 */
public record Caller(String tokenId, String name, String project) {

  /** Whether an instance of {@code project} is this caller's to see and change. */
  public boolean reaches(String project) {
    return this.project == null || this.project.equals(project);
  }
}
