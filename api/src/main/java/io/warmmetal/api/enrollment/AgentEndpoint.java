package io.warmmetal.api.enrollment;

/**
 * Where agents reach the API (its agents' port, as servers see it) and the CA pin they verify it
 * by.
 */
public record AgentEndpoint(String url, String caPin) {}
