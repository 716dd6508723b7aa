package io.warmmetal.api.auth;

/**
 * The caller behind a bearer token: its project holds what it launches, and (unless its role reaches across
 * projects) is all it sees. {@code tokenId} keeps client tokens apart within a project (idempotency is per caller).
 */
public record Principal(String tokenId, String name, Role role, String project) {}
