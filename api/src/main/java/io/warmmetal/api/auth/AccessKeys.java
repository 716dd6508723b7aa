package io.warmmetal.api.auth;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.auth.SignatureFailure.Code;
import io.warmmetal.api.crypto.SecretBox;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Clock;

/**
 * Access keys: the AWS-style credential of an API token (minted with it by {@link TokenStore}),
 * checked as AWS Signature Version 4 for the EC2-compatible endpoint. A signature names its key;
 * the key's token answers as the same {@link Principal} its bearer secret would. Each request looks
 * its key up (one indexed query) rather than caching it, so a revoked token's key is refused at
 * once on every replica; the sealed secret is opened, and the HMACs computed, on a worker thread.
 */
public final class AccessKeys {
  /** The service a signature must be scoped to; any region is accepted. */
  static final String SERVICE = "ec2";

  private final Vertx vertx;
  private final Pool db;
  private final SecretBox box;
  private final Clock clock;

  public AccessKeys(Vertx vertx, Pool db, SecretBox box, Clock clock) {
    this.vertx = vertx;
    this.db = db;
    this.box = box;
    this.clock = clock;
  }

  /**
   * The principal of the token whose access key signed the request; fails with {@link
   * SignatureFailure} (unsigned, malformed, expired, unknown or revoked key, wrong signature).
   */
  public Future<Principal> authenticate(SignedRequest request) {
    SigV4.Claim claim;
    try {
      claim = SigV4.parse(request);
      SigV4.check(claim, SERVICE, clock);
    } catch (SignatureFailure f) {
      return Future.failedFuture(f);
    }
    // A boot token never has a key (a constraint says so); the role is excluded here all the same.
    return db.preparedQuery(
            "SELECT id, name, role, project, machine_labels, access_key_secret FROM api_tokens"
                + " WHERE access_key_id = $1 AND revoked_at IS NULL AND role <> 'boot'")
        .execute(Tuple.of(claim.accessKeyId()))
        .compose(
            rows -> {
              if (rows.size() == 0) {
                return Future.failedFuture(
                    new SignatureFailure(
                        Code.AuthFailure,
                        "the access key "
                            + claim.accessKeyId()
                            + " is not known or its token was revoked"));
              }
              Row row = rows.iterator().next();
              Principal principal = TokenStore.principal(row);
              byte[] sealed = row.getBuffer("access_key_secret").getBytes();
              return vertx.executeBlocking(
                  () -> {
                    SigV4.verify(request, claim, open(sealed, claim.accessKeyId()));
                    return principal;
                  },
                  false);
            });
  }

  private String open(byte[] sealed, String accessKeyId) {
    try {
      return new String(box.open(sealed, boundTo(accessKeyId)), StandardCharsets.UTF_8);
    } catch (GeneralSecurityException e) {
      // Sealed under another WARMMETAL_SECRET_KEY, or the row was altered: a fault, not a refusal.
      throw new IllegalStateException(
          "the secret of access key " + accessKeyId + " does not open with this secret key", e);
    }
  }

  /** What an access key's sealed secret is bound to, so it opens only in its own row. */
  static String boundTo(String accessKeyId) {
    return "access-key:" + accessKeyId;
  }
}
