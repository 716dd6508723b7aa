package io.warmmetal.api.ssh;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;

/**
 * How a server is reached over SSH, as stored: address, port, user, the stored key it logs in with,
 * and the host key it must present. No secret in it: the key is fetched and opened only when a
 * connection is made.
 */
public record SshAccess(
    String host, int port, String username, String keyId, String hostKeyFingerprint) {
  /** From a row with columns host, port, username, key_id, host_key_fingerprint. */
  public static SshAccess of(Row r) {
    return new SshAccess(
        r.getString("host"),
        r.getInteger("port"),
        r.getString("username"),
        r.getString("key_id"),
        r.getString("host_key_fingerprint"));
  }

  public SshTarget target(String privateKey) {
    return new SshTarget(host, port, username, privateKey, hostKeyFingerprint);
  }

  public JsonObject toJson() {
    return new JsonObject()
        .put("address", host)
        .put("port", port)
        .put("user", username)
        .put("keyId", keyId)
        .put("hostKeyFingerprint", hostKeyFingerprint);
  }
}
