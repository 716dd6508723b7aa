package io.warmmetal.api.lifecycle;

/** Who asks: the API token's id (client tokens are scoped by it) and its name (events say who did what). */
public record Caller(String tokenId, String name) {}
