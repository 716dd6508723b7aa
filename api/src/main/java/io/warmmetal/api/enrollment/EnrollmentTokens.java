package io.warmmetal.api.enrollment;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.Ids;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.Json;
import io.warmmetal.api.lifecycle.EnrollmentGrants;
import io.warmmetal.api.lifecycle.Refusal;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Enrollment tokens: minted by an admin with a number of uses, an expiry and labels for the
 * machines that enroll with them; stored as SHA-256 digests (the secrets are 256 random bits);
 * shown once. The enrolling transaction uses them up through {@link EnrollmentGrants}.
 */
public final class EnrollmentTokens implements EnrollmentGrants {
  private final Vertx vertx;
  private final Pool db;
  private final List<Follower> followers = new CopyOnWriteArrayList<>();

  /** Told in the enrolling transaction which machine a token enrolled. */
  @FunctionalInterface
  public interface Follower {
    Future<Void> enrolled(SqlConnection tx, String tokenId, String machineId);
  }

  public EnrollmentTokens(Vertx vertx, Pool db) {
    this.vertx = vertx;
    this.db = db;
  }

  /** Whoever mints tokens for its own purpose (an SSH enrollment) follows what they enroll. */
  public void onGranted(Follower follower) {
    followers.add(follower);
  }

  public Future<JsonObject> create(
      int uses, int expiresInSeconds, JsonObject labels, boolean allowReenroll) {
    return create(db, uses, expiresInSeconds, labels, allowReenroll);
  }

  /** As {@link #create(int, int, JsonObject, boolean)}, in the caller's transaction. */
  public Future<JsonObject> create(
      SqlClient client, int uses, int expiresInSeconds, JsonObject labels, boolean allowReenroll) {
    return create(client, uses, expiresInSeconds, labels, allowReenroll, null);
  }

  /**
   * A single-use token for one network boot, minted with the boot credential {@code bootTokenId}
   * for the hardware iPXE named ({@code mac}, {@code uuid}; either may be null): the agent keeps no
   * state, so it may take back the machine its hardware already is — but only an idle one — and
   * what it enrolls new waits for acceptance. The hardware's earlier boot tokens still unused are
   * revoked in the same transaction: at most one is outstanding per MAC and per system UUID.
   */
  public Future<JsonObject> createForBoot(
      int expiresInSeconds, JsonObject labels, String bootTokenId, String mac, String uuid) {
    return db.withTransaction(
        tx ->
            tx.preparedQuery(
                    """
            UPDATE enrollment_tokens SET revoked_at = now()
            WHERE revoked_at IS NULL AND uses_left > 0 AND (boot_mac = $1 OR boot_uuid = $2)""")
                .execute(Tuple.of(mac, uuid))
                .compose(
                    x ->
                        create(
                            tx,
                            1,
                            expiresInSeconds,
                            labels,
                            true,
                            new Boot(bootTokenId, mac, uuid))));
  }

  /**
   * Who minted a token through a network boot, and for which hardware; null for an operator's
   * token.
   */
  private record Boot(String tokenId, String mac, String uuid) {}

  private Future<JsonObject> create(
      SqlClient client,
      int uses,
      int expiresInSeconds,
      JsonObject labels,
      boolean allowReenroll,
      Boot boot) {
    String id = Ids.random("et-", 16);
    String secret = "wme_" + Ids.tokenSecret().substring(3);
    return vertx
        .executeBlocking(() -> Ids.sha256(secret), false)
        .compose(
            hash ->
                client
                    .preparedQuery(
                        """
                INSERT INTO enrollment_tokens (id, token_hash, uses_left, uses, labels, expires_at, allow_reenroll,
                                               reenroll_idle_only, boot_token_id, boot_mac, boot_uuid)
                VALUES ($1, $2, $3, $3, $4, now() + make_interval(secs => $5), $6, $7, $8, $9, $10) RETURNING *""")
                    .execute(
                        Tuple.wrap(
                            new Object[] {
                              id,
                              Buffer.buffer(hash),
                              uses,
                              labels,
                              (double) expiresInSeconds,
                              allowReenroll,
                              boot != null,
                              boot == null ? null : boot.tokenId(),
                              boot == null ? null : boot.mac(),
                              boot == null ? null : boot.uuid()
                            })))
        .map(rows -> toJson(rows.iterator().next()).put("token", secret));
  }

  /**
   * Deletes tokens expired (or revoked) longer than {@code kept} ago — one is minted per network
   * boot — except those an SSH enrollment still refers to. Answers how many went.
   */
  public Future<Integer> deleteStale(Duration kept) {
    return db.preparedQuery(
            """
            DELETE FROM enrollment_tokens t
            WHERE coalesce(t.revoked_at, t.expires_at) < now() - make_interval(secs => $1)
              AND NOT EXISTS (SELECT 1 FROM ssh_enrollments e WHERE e.token_id = t.id)""")
        .execute(Tuple.of((double) kept.toSeconds()))
        .map(rows -> rows.rowCount());
  }

  public Future<JsonArray> list() {
    return db.query("SELECT * FROM enrollment_tokens ORDER BY created_at, id")
        .execute()
        .map(
            rows -> {
              JsonArray out = new JsonArray();
              rows.forEach(r -> out.add(toJson(r)));
              return out;
            });
  }

  public Future<Void> revoke(String id) {
    return db.preparedQuery(
            "UPDATE enrollment_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1")
        .execute(Tuple.of(id))
        .map(
            rows -> {
              if (rows.rowCount() == 0) {
                throw ApiError.notFound("enrollment token", id);
              }
              return null;
            });
  }

  /**
   * Uses up one use of a token inside the caller's transaction, or refuses it ({@code
   * Unauthorized}) saying why the token is no good (unknown or revoked, expired, used up).
   */
  @Override
  public Future<Grant> consume(SqlConnection tx, String secret) {
    return vertx
        .executeBlocking(() -> Ids.sha256(secret), false)
        .compose(
            hash ->
                tx.preparedQuery(
                        """
                SELECT id, uses_left, labels, allow_reenroll, reenroll_idle_only, boot_token_id,
                       expires_at < now() AS expired
                FROM enrollment_tokens
                WHERE token_hash = $1 AND revoked_at IS NULL FOR UPDATE""")
                    .execute(Tuple.of(Buffer.buffer(hash))))
        .compose(
            rows -> {
              if (rows.size() == 0) {
                throw Refusal.of(
                    Refusal.Reason.Unauthorized, "the enrollment token is unknown or revoked");
              }
              Row t = rows.iterator().next();
              if (t.getBoolean("expired")) {
                throw Refusal.of(Refusal.Reason.Unauthorized, "the enrollment token has expired");
              }
              if (t.getInteger("uses_left") == 0) {
                throw Refusal.of(Refusal.Reason.Unauthorized, "the enrollment token is used up");
              }
              return tx.preparedQuery(
                      "UPDATE enrollment_tokens SET uses_left = uses_left - 1 WHERE id = $1")
                  .execute(Tuple.of(t.getString("id")))
                  .map(
                      x ->
                          new Grant(
                              t.getString("id"),
                              t.getJsonObject("labels"),
                              t.getBoolean("allow_reenroll"),
                              t.getBoolean("reenroll_idle_only"),
                              t.getString("boot_token_id")));
            });
  }

  @Override
  public Future<Void> granted(SqlConnection tx, Grant grant, String machineId) {
    Future<Void> chain = Future.succeededFuture();
    for (Follower f : followers) {
      chain = chain.compose(x -> f.enrolled(tx, grant.tokenId(), machineId));
    }
    return chain;
  }

  private static JsonObject toJson(Row r) {
    OffsetDateTime revoked = r.getOffsetDateTime("revoked_at");
    return new JsonObject()
        .put("id", r.getString("id"))
        .put("uses", r.getInteger("uses"))
        .put("usesLeft", r.getInteger("uses_left"))
        .put("labels", r.getJsonObject("labels"))
        .put("allowReenroll", r.getBoolean("allow_reenroll"))
        .put("bootTokenId", r.getString("boot_token_id"))
        .put("expiresAt", Json.time(r.getOffsetDateTime("expires_at")))
        .put("createdAt", Json.time(r.getOffsetDateTime("created_at")))
        .put("revokedAt", Json.time(revoked));
  }
}
