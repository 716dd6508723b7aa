package io.warmmetal.api.auth;

import io.vertx.core.json.JsonObject;

/**
 * The caller behind a bearer token: its project holds what it launches, and (unless its role
 * reaches across projects) is all it sees. {@code tokenId} says which token did what; client tokens
 * are the project's, not the token's (a rotated credential retrying a launch gets the same launch).
 * {@code machineLabels}: for a boot token, the labels the machines it boots may carry (never null
 * for one).
 */
public record Principal(
    String tokenId, String name, Role role, String project, JsonObject machineLabels) {
  public Principal(String tokenId, String name, Role role, String project) {
    this(tokenId, name, role, project, null);
  }
}
