package io.warmmetal.api.auth;

import io.vertx.core.MultiMap;

/**
 * A request as SigV4 signs it: the path and query exactly as received (not decoded: the signature
 * covers their encoding), {@code rawQuery} null if there is none, the headers as sent and the body
 * (empty if none).
 */
public record SignedRequest(
    String method, String rawPath, String rawQuery, MultiMap headers, byte[] body) {
  public SignedRequest {
    body = body == null ? new byte[0] : body;
  }
}
