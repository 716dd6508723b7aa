package io.warmmetal.api.auth;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.Ids;
import io.warmmetal.api.crypto.SecretBox;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * API bearer tokens, stored as SHA-256 digests (the secrets are 256 random bits, so a fast digest
 * is enough). Lookups are cached briefly per replica; a revocation is immediate here and reaches
 * other replicas within {@link #CACHE_MILLIS}. Every token but a boot token also gets an access key
 * for SigV4 signatures (the EC2-compatible endpoint, {@link AccessKeys}): its secret must be read
 * back to check an HMAC, so it is sealed with the {@link SecretBox}, not digested.
 */
public final class TokenStore {
  static final long CACHE_MILLIS = 5_000;
  private static final int CACHE_LIMIT = 10_000;

  private final Vertx vertx;
  private final Pool db;
  private final SecretBox secrets;
  private final Map<String, Cached> cache = new ConcurrentHashMap<>();

  private record Cached(Principal principal, long expiresAt) {}

  public TokenStore(Vertx vertx, Pool db, SecretBox secrets) {
    this.vertx = vertx;
    this.db = db;
    this.secrets = secrets;
  }

  /** The principal behind a bearer secret, or empty if it is unknown or revoked. */
  public Future<Optional<Principal>> authenticate(String secret) {
    Cached hit = cache.get(secret);
    long now = System.currentTimeMillis();
    if (hit != null && hit.expiresAt > now) {
      return Future.succeededFuture(Optional.of(hit.principal));
    }
    return vertx
        .executeBlocking(() -> Ids.sha256(secret), false)
        .compose(
            hash ->
                db.preparedQuery(
                        "SELECT id, name, role, project, machine_labels FROM api_tokens"
                            + " WHERE token_hash = $1 AND revoked_at IS NULL")
                    .execute(Tuple.of(Buffer.buffer(hash))))
        .map(
            rows -> {
              if (rows.size() == 0) {
                return Optional.<Principal>empty();
              }
              Principal p = principal(rows.iterator().next());
              if (cache.size() >= CACHE_LIMIT) {
                cache.clear();
              }
              cache.put(secret, new Cached(p, now + CACHE_MILLIS));
              return Optional.of(p);
            });
  }

  /** The caller behind a row of {@code api_tokens} (id, name, role, project, machine_labels). */
  static Principal principal(Row r) {
    return new Principal(
        r.getString("id"),
        r.getString("name"),
        Role.fromWire(r.getString("role")),
        r.getString("project"),
        r.getJsonObject("machine_labels"));
  }

  /**
   * Mints a token; the returned JSON holds the secret, which is never stored or shown again. A boot
   * token carries the labels its machines may carry ({@code machineLabels}, none if null); no other
   * role takes them. Every other role gets an access key too, its secret ({@code secretAccessKey})
   * likewise returned only here; a boot token gets none, as it travels in clear.
   */
  public Future<JsonObject> create(
      String name, Role role, String project, JsonObject machineLabels) {
    if (machineLabels != null && role != Role.BOOT) {
      return Future.failedFuture(
          ApiError.invalid(
              "machineLabels",
              "only boot tokens carry machineLabels (the"
                  + " labels of the machines they boot); this one's role is "
                  + role.wireName()));
    }
    JsonObject labels =
        role == Role.BOOT ? (machineLabels == null ? new JsonObject() : machineLabels) : null;
    String id = Ids.tokenId();
    String secret = Ids.tokenSecret();
    String accessKeyId = role == Role.BOOT ? null : Ids.accessKeyId();
    String accessKeySecret = role == Role.BOOT ? null : Ids.accessKeySecret();
    return vertx
        .executeBlocking(
            () -> {
              Buffer sealed =
                  accessKeyId == null
                      ? null
                      : Buffer.buffer(
                          secrets.seal(
                              accessKeySecret.getBytes(StandardCharsets.UTF_8),
                              AccessKeys.boundTo(accessKeyId)));
              return Tuple.of(
                  id,
                  name,
                  role.wireName(),
                  Buffer.buffer(Ids.sha256(secret)),
                  project,
                  labels,
                  accessKeyId,
                  sealed);
            },
            false)
        .compose(
            row ->
                db.preparedQuery(
                        """
                INSERT INTO api_tokens
                  (id, name, role, token_hash, project, machine_labels, access_key_id, access_key_secret)
                SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM projects WHERE name = $5)
                RETURNING *""")
                    .execute(row))
        .map(
            rows -> {
              if (rows.size() == 0) {
                throw ApiError.invalid(
                    "project",
                    "no such project '"
                        + project
                        + "' (PUT /v1/projects/"
                        + project
                        + " creates it)");
              }
              JsonObject created = toJson(rows.iterator().next()).put("token", secret);
              if (accessKeySecret != null) {
                created.put("secretAccessKey", accessKeySecret);
              }
              return created;
            });
  }

  /** The tokens of one project, or of every project ({@code project} null). */
  public Future<List<JsonObject>> list(String project) {
    return db.preparedQuery(
            "SELECT * FROM api_tokens WHERE $1::text IS NULL OR project = $1 ORDER BY created_at, id")
        .execute(Tuple.of(project))
        .map(
            rows -> {
              List<JsonObject> out = new ArrayList<>();
              rows.forEach(r -> out.add(toJson(r)));
              return out;
            });
  }

  /**
   * Revokes a token; a boot token's enrollment tokens still unused go with it (whoever held the
   * boot token may hold them too).
   */
  public Future<Void> revoke(String id) {
    return db.preparedQuery(
            """
            WITH minted AS (
              UPDATE enrollment_tokens SET revoked_at = now()
              WHERE boot_token_id = $1 AND revoked_at IS NULL AND uses_left > 0)
            UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING id""")
        .execute(Tuple.of(id))
        .map(
            rows -> {
              if (rows.size() == 0) {
                throw ApiError.notFound("token", id);
              }
              cache.clear();
              return null;
            });
  }

  /**
   * Makes {@code secret} the bootstrap admin token (replacing an earlier bootstrap token), unless
   * it already is.
   */
  public Future<Void> installBootstrapAdmin(String secret) {
    return vertx
        .executeBlocking(() -> Ids.sha256(secret), false)
        .compose(
            hash ->
                db.withTransaction(
                    tx ->
                        tx.preparedQuery(
                                "SELECT token_hash FROM api_tokens WHERE bootstrap FOR UPDATE")
                            .execute()
                            .compose(
                                rows -> {
                                  if (rows.size() > 0
                                      && Arrays.equals(
                                          rows.iterator().next().getBuffer(0).getBytes(), hash)) {
                                    return Future.succeededFuture();
                                  }
                                  return tx.query("DELETE FROM api_tokens WHERE bootstrap")
                                      .execute()
                                      .compose(
                                          x ->
                                              tx.preparedQuery(
                                                      "INSERT INTO api_tokens (id, name, role, token_hash, bootstrap)"
                                                          + " VALUES ($1, 'bootstrap-admin', 'admin', $2, true)")
                                                  .execute(
                                                      Tuple.of(Ids.tokenId(), Buffer.buffer(hash))))
                                      .mapEmpty();
                                })));
  }

  public Future<Boolean> hasBootstrapAdmin() {
    return db.query("SELECT 1 FROM api_tokens WHERE bootstrap AND revoked_at IS NULL")
        .execute()
        .map(rows -> rows.size() > 0);
  }

  private static JsonObject toJson(Row r) {
    JsonObject json =
        new JsonObject()
            .put("id", r.getString("id"))
            .put("name", r.getString("name"))
            .put("role", r.getString("role"))
            .put("project", r.getString("project"))
            .put("accessKeyId", r.getString("access_key_id")) // null: no access key
            .put("createdAt", Json.time(r.getOffsetDateTime("created_at")))
            .put("revokedAt", Json.time(r.getOffsetDateTime("revoked_at")));
    if (r.getJsonObject("machine_labels") != null) {
      json.put("machineLabels", r.getJsonObject("machine_labels")); // a boot token's
    }
    return json;
  }
}
