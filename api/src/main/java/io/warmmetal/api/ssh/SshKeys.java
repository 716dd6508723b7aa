package io.warmmetal.api.ssh;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.Ids;
import io.warmmetal.api.crypto.SecretBox;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import io.warmmetal.api.http.Json;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.util.Base64;
import net.schmizz.sshj.common.Buffer.PlainBuffer;
import net.schmizz.sshj.common.KeyType;
import net.schmizz.sshj.userauth.keyprovider.KeyProvider;

/**
 * Private keys the API logs in to servers with. Uploaded once, sealed at rest with the server's
 * secret key (bound to the key's id), referred to by id; only the public half and its fingerprint
 * are ever shown again.
 */
public final class SshKeys {
  private final Vertx vertx;
  private final Pool db;
  private final SecretBox secrets;

  public SshKeys(Vertx vertx, Pool db, SecretBox secrets) {
    this.vertx = vertx;
    this.db = db;
    this.secrets = secrets;
  }

  /** The public half of a private key, as parsed from an upload. */
  record Parsed(String publicKey, String fingerprint) {}

  public Future<JsonObject> create(String name, String privateKey) {
    String id = Ids.random("sshkey-", 16);
    return vertx
        .executeBlocking(
            () -> {
              Parsed parsed = parse(privateKey);
              return new Object[] {
                parsed, secrets.seal(privateKey.getBytes(StandardCharsets.UTF_8), boundTo(id))
              };
            },
            false)
        .compose(
            p ->
                db.preparedQuery(
                        """
                INSERT INTO ssh_keys (id, name, public_key, fingerprint, private_key) VALUES ($1, $2, $3, $4, $5)
                RETURNING id, name, public_key, fingerprint, created_at""")
                    .execute(
                        Tuple.of(
                            id,
                            name,
                            ((Parsed) p[0]).publicKey(),
                            ((Parsed) p[0]).fingerprint(),
                            Buffer.buffer((byte[]) p[1]))))
        .recover(
            err ->
                Future.failedFuture(
                    err instanceof PgException pg && "23505".equals(pg.getSqlState())
                        ? ApiError.of(ErrorCode.Conflict, "an SSH key named '" + name + "' exists")
                        : err))
        .map(rows -> toJson(rows.iterator().next()));
  }

  public Future<JsonArray> list() {
    return db.query(
            "SELECT id, name, public_key, fingerprint, created_at FROM ssh_keys ORDER BY name")
        .execute()
        .map(
            rows -> {
              JsonArray out = new JsonArray();
              rows.forEach(r -> out.add(toJson(r)));
              return out;
            });
  }

  public Future<JsonObject> get(String id) {
    return db.preparedQuery(
            "SELECT id, name, public_key, fingerprint, created_at FROM ssh_keys WHERE id = $1")
        .execute(Tuple.of(id))
        .map(
            rows -> {
              if (rows.size() == 0) {
                throw ApiError.notFound("SSH key", id);
              }
              return toJson(rows.iterator().next());
            });
  }

  /** Deletes a key no machine or enrollment refers to any more. */
  public Future<Void> delete(String id) {
    return db.preparedQuery("DELETE FROM ssh_keys WHERE id = $1")
        .execute(Tuple.of(id))
        .recover(
            err ->
                Future.failedFuture(
                    err instanceof PgException pg && "23503".equals(pg.getSqlState())
                        ? ApiError.of(
                            ErrorCode.Conflict,
                            "SSH key " + id + " is still how machines are reached")
                        : err))
        .map(
            rows -> {
              if (rows.rowCount() == 0) {
                throw ApiError.notFound("SSH key", id);
              }
              return null;
            });
  }

  /**
   * The private key, opened on a worker thread; 400 naming {@code field} if there is no such key.
   */
  public Future<String> privateKey(SqlClient client, String id, String field) {
    return client
        .preparedQuery("SELECT private_key FROM ssh_keys WHERE id = $1")
        .execute(Tuple.of(id))
        .compose(
            rows -> {
              if (rows.size() == 0) {
                return Future.failedFuture(
                    ApiError.invalid(field, "SSH key " + id + " does not exist"));
              }
              byte[] sealed = rows.iterator().next().getBuffer("private_key").getBytes();
              return vertx.executeBlocking(
                  () -> new String(secrets.open(sealed, boundTo(id)), StandardCharsets.UTF_8),
                  false);
            });
  }

  /** The target for an SSH access record, its key opened. */
  public Future<SshTarget> target(SqlClient client, SshAccess access, String field) {
    return privateKey(client, access.keyId(), field).map(access::target);
  }

  private static String boundTo(String id) {
    return "ssh-key:" + id;
  }

  /**
   * The public half and its SHA-256 fingerprint; 400 if the text is not an unencrypted private key.
   */
  static Parsed parse(String privateKey) {
    try (net.schmizz.sshj.SSHClient parser = new net.schmizz.sshj.SSHClient()) {
      KeyProvider keys = parser.loadKeys(privateKey, null, null);
      keys.getPrivate(); // an encrypted key fails here: there is no passphrase to give
      PublicKey pub = keys.getPublic();
      byte[] blob = new PlainBuffer().putPublicKey(pub).getCompactData();
      String fingerprint =
          "SHA256:" + Base64.getEncoder().withoutPadding().encodeToString(Ids.sha256(blob));
      return new Parsed(
          KeyType.fromKey(pub) + " " + Base64.getEncoder().encodeToString(blob), fingerprint);
    } catch (Exception e) {
      throw ApiError.invalid(
          "privateKey",
          "not an unencrypted private key in OpenSSH or PEM form (an encrypted key "
              + "cannot be used unattended; it is sealed at rest here)");
    }
  }

  private static JsonObject toJson(Row r) {
    return new JsonObject()
        .put("id", r.getString("id"))
        .put("name", r.getString("name"))
        .put("publicKey", r.getString("public_key"))
        .put("fingerprint", r.getString("fingerprint"))
        .put("createdAt", Json.time(r.getOffsetDateTime("created_at")));
  }
}
