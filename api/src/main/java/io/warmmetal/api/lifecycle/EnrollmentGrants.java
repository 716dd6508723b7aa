package io.warmmetal.api.lifecycle;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;

/**
 * The enrollment tokens, as the enrolling transaction uses them. The core defines what it needs;
 * the enrollment edge, which owns the tokens, provides it.
 */
public interface EnrollmentGrants {

  /**
   * What a valid token grants the enrolling machine; {@code reenroll}: it may take back an existing
   * machine — with {@code idleOnly}, only one nobody is using. {@code bootTokenId}: the boot
   * credential a network boot minted the token with (whoever holds it may mint one; what it enrolls
   * is new hardware until an operator accepts it, or a hardware record matches it), or null for a
   * token an operator minted (what it enrolls is admitted).
   */
  record Grant(
      String tokenId, JsonObject labels, boolean reenroll, boolean idleOnly, String bootTokenId) {
    /** Whether whoever minted the token vouches for what it enrolls. */
    public boolean admits() {
      return bootTokenId == null;
    }
  }

  /**
   * Uses up one use of the token in {@code tx}, or refuses it ({@code Unauthorized}, saying why).
   */
  Future<Grant> consume(SqlConnection tx, String token);

  /**
   * In the same transaction, once the machine is known: whoever minted the token learns what it
   * enrolled.
   */
  Future<Void> granted(SqlConnection tx, Grant grant, String machineId);
}
