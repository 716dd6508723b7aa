package io.warmmetal.api.auth;

/**
 * The caller behind a bearer token: its project holds what it launches, and (unless its role reaches across
 * projects) is all it sees. {@code tokenId} says which token did what; client tokens are the project's, not the
 * token's (a rotated credential retrying a launch gets the same launch).
 */
public record Principal(String tokenId, String name, Role role, String project) {}
