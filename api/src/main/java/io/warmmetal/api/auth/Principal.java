package io.warmmetal.api.auth;

/** The caller behind a bearer token. {@code tokenId} scopes client tokens (idempotency is per caller). */
public record Principal(String tokenId, String name, Role role) {}
