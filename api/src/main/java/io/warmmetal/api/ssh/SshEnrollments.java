package io.warmmetal.api.ssh;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.Ids;
import io.warmmetal.api.crypto.Redaction;
import io.warmmetal.api.enrollment.AgentEndpoint;
import io.warmmetal.api.enrollment.EnrollmentTokens;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.Json;
import io.warmmetal.api.http.OutageLog;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Enrolling an existing server over SSH. The request is recorded with a fresh single-use enrollment
 * token (in one transaction) and answered at once; the install runs behind it: the agent uploaded,
 * configured with the token and started. The agent then enrolls like any other; the token ties its
 * machine back to this enrollment, and the SSH access used here becomes the machine's (for
 * recovery). The outcome and the install's output, secrets redacted, are the enrollment's state and
 * events.
 */
public final class SshEnrollments {
  private static final Logger LOG = LoggerFactory.getLogger(SshEnrollments.class);
  private static final OutageLog OUTAGE =
      new OutageLog(
          LOG,
          "Recording the outcome of an SSH enrollment failed, database unavailable",
          "outcomes",
          Duration.ofSeconds(60));
  private static final Pattern AGENT_SETTING = Pattern.compile("WARMMETAL_AGENT_[A-Z0-9_]+");
  private static final Set<String> SET_HERE =
      Set.of(
          "WARMMETAL_AGENT_API",
          "WARMMETAL_AGENT_CA_PIN",
          "WARMMETAL_AGENT_CA_FILE",
          "WARMMETAL_AGENT_TOKEN",
          "WARMMETAL_AGENT_TOKEN_FILE",
          "WARMMETAL_AGENT_STATE_DIR",
          "WARMMETAL_AGENT_ADDRESS");
  private static final Pattern SAFE_VALUE = Pattern.compile("[^'\\\\\\p{Cntrl}]*");
  private static final int TOKEN_SECONDS = 3600;
  private static final int OUTPUT_IN_EVENTS = 4096;

  private final Pool db;
  private final SshKeys keys;
  private final EnrollmentTokens tokens;
  private final AgentInstaller installer;
  private final String installDir;
  private final Supplier<AgentEndpoint> endpoint;

  public SshEnrollments(
      Pool db,
      SshKeys keys,
      EnrollmentTokens tokens,
      AgentInstaller installer,
      String installDir,
      Supplier<AgentEndpoint> endpoint) {
    this.db = db;
    this.keys = keys;
    this.tokens = tokens;
    this.installer = installer;
    this.installDir = installDir;
    this.endpoint = endpoint;
    tokens.onGranted(
        SshEnrollments::enrolled); // the agent an install started enrolls with its token
  }

  private record Pending(JsonObject enrollment, SshTarget target, String token) {}

  /**
   * Records the enrollment and starts the install; answers the enrollment in state {@code
   * installing}.
   */
  public Future<JsonObject> start(JsonObject request) {
    Map<String, String> extra;
    try {
      installer.requireJar();
      extra = agentEnvironment(request.getJsonObject("agentEnvironment", new JsonObject()));
    } catch (ApiError e) {
      return Future.failedFuture(e);
    }
    String id = Ids.random("sshe-", 16);
    SshAccess access =
        new SshAccess(
            request.getString("address"),
            request.getInteger("port", 22),
            request.getString("user", "root"),
            request.getString("keyId"),
            request.getString("hostKeyFingerprint"));
    return db.withTransaction(
            tx ->
                keys.target(tx, access, "keyId")
                    .compose(
                        target ->
                            tokens
                                .create(
                                    tx,
                                    1,
                                    TOKEN_SECONDS,
                                    request.getJsonObject("labels", new JsonObject()),
                                    request.getBoolean("allowReenroll", false))
                                .compose(
                                    token ->
                                        tx.preparedQuery(
                                                """
                        INSERT INTO ssh_enrollments (id, token_id, host, port, username, key_id, host_key_fingerprint,
                                                     state)
                        VALUES ($1, $2, $3, $4, $5, $6, $7, 'installing') RETURNING *""")
                                            .execute(
                                                Tuple.of(
                                                    id,
                                                    token.getString("id"),
                                                    access.host(),
                                                    access.port(),
                                                    access.username(),
                                                    access.keyId(),
                                                    access.hostKeyFingerprint()))
                                            .map(
                                                rows ->
                                                    new Pending(
                                                        toJson(rows.iterator().next()),
                                                        target,
                                                        token.getString("token"))))))
        .onSuccess(p -> install(id, access, p.target(), p.token(), extra))
        .map(Pending::enrollment);
  }

  private void install(
      String id, SshAccess access, SshTarget target, String token, Map<String, String> extra) {
    AgentEndpoint api = endpoint.get();
    Map<String, String> env = new LinkedHashMap<>();
    env.put("WARMMETAL_AGENT_API", api.url());
    env.put("WARMMETAL_AGENT_CA_PIN", api.caPin());
    env.put("WARMMETAL_AGENT_TOKEN", token);
    env.put("WARMMETAL_AGENT_STATE_DIR", installDir + "/state");
    env.put("WARMMETAL_AGENT_ADDRESS", access.host());
    env.putAll(extra);
    installer
        .install(target, env)
        .transform(
            ar -> {
              if (ar.failed()) {
                return finish(
                    id,
                    "failed",
                    Redaction.redact(String.valueOf(ar.cause().getMessage()), List.of(token)),
                    null);
              }
              SshResult r = ar.result();
              String output = Redaction.redact(r.stdout() + r.stderr(), List.of(token));
              if (!r.succeeded()) {
                String why =
                    r.timedOut()
                        ? "the install did not finish in time"
                        : "the install failed (exit status " + r.exitStatus() + ")";
                return finish(id, "failed", why + ": " + lastLine(output), r.toJson(output));
              }
              return finish(id, "installed", lastLine(output), r.toJson(output));
            })
        .onFailure(
            err -> {
              if (!OUTAGE.ifTransient(err)) {
                LOG.warn("Recording the outcome of SSH enrollment {} failed", id, err);
              }
            });
  }

  /**
   * Records the install's outcome; an enrollment its agent already completed stays {@code
   * enrolled}. A failed install's token is used up: it may sit in a settings file on the server.
   */
  private Future<Void> finish(String id, String state, String message, JsonObject output) {
    if (output != null && output.getString("output").length() > OUTPUT_IN_EVENTS) {
      String text = output.getString("output");
      output.put("output", "…" + text.substring(text.length() - OUTPUT_IN_EVENTS));
    }
    return db.withTransaction(
        tx ->
            tx.preparedQuery(
                    """
            UPDATE ssh_enrollments SET state = $2, message = $3, updated_at = now()
            WHERE id = $1 AND state = 'installing'""")
                .execute(Tuple.of(id, state, message))
                .compose(
                    x ->
                        !state.equals("failed")
                            ? Future.succeededFuture()
                            : tx.preparedQuery(
                                    """
                UPDATE enrollment_tokens SET uses_left = 0
                WHERE id = (SELECT token_id FROM ssh_enrollments WHERE id = $1)""")
                                .execute(Tuple.of(id)))
                .compose(
                    x ->
                        tx.preparedQuery(
                                """
                INSERT INTO events (type, subject, reason, details) VALUES ('SshEnrollment', $1, $2, $3)""")
                            .execute(
                                Tuple.of(
                                    id,
                                    state.equals("failed") ? "install failed" : "agent installed",
                                    (output == null ? new JsonObject() : output)
                                        .put("message", message))))
                .mapEmpty());
  }

  /**
   * Installs cut off by a stopped API (older than any install can take) are failed, so they do not
   * look in progress for ever.
   */
  public Future<Integer> failInterrupted(Duration olderThan) {
    return db.preparedQuery(
            """
            UPDATE ssh_enrollments SET state = 'failed', message = 'interrupted: the API stopped during the install',
              updated_at = now()
            WHERE state = 'installing' AND updated_at < now() - make_interval(secs => $1)""")
        .execute(Tuple.of((double) olderThan.toSeconds()))
        .map(rows -> rows.rowCount());
  }

  public Future<JsonObject> get(String id) {
    return db.preparedQuery("SELECT * FROM ssh_enrollments WHERE id = $1")
        .execute(Tuple.of(id))
        .map(
            rows -> {
              if (rows.size() == 0) {
                throw ApiError.notFound("SSH enrollment", id);
              }
              return toJson(rows.iterator().next());
            });
  }

  public Future<JsonArray> list() {
    return db.query("SELECT * FROM ssh_enrollments ORDER BY created_at DESC, id LIMIT 100")
        .execute()
        .map(
            rows -> {
              JsonArray out = new JsonArray();
              rows.forEach(r -> out.add(toJson(r)));
              return out;
            });
  }

  /**
   * Called in an enrolling agent's transaction with the token it used: if the token was an SSH
   * enrollment's, that enrollment is done and its SSH access becomes the machine's.
   */
  private static Future<Void> enrolled(SqlClient tx, String tokenId, String machineId) {
    return tx.preparedQuery(
            """
            WITH done AS (
              UPDATE ssh_enrollments SET state = 'enrolled', machine_id = $2, message = NULL, updated_at = now()
              WHERE token_id = $1
              RETURNING host, port, username, key_id, host_key_fingerprint)
            INSERT INTO machine_ssh (machine_id, host, port, username, key_id, host_key_fingerprint)
            SELECT $2, host, port, username, key_id, host_key_fingerprint FROM done WHERE key_id IS NOT NULL
            ON CONFLICT (machine_id) DO UPDATE SET host = excluded.host, port = excluded.port,
              username = excluded.username, key_id = excluded.key_id,
              host_key_fingerprint = excluded.host_key_fingerprint, updated_at = now()""")
        .execute(Tuple.of(tokenId, machineId))
        .mapEmpty();
  }

  private static Map<String, String> agentEnvironment(JsonObject given) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String name : given.fieldNames()) {
      String field = "agentEnvironment." + name;
      if (!AGENT_SETTING.matcher(name).matches()) {
        throw ApiError.invalid(field, "only agent settings (WARMMETAL_AGENT_*) may be given");
      }
      if (SET_HERE.contains(name)) {
        throw ApiError.invalid(field, name + " is set by the enrollment itself");
      }
      Object value = given.getValue(name);
      if (!(value instanceof String s) || !SAFE_VALUE.matcher(s).matches()) {
        throw ApiError.invalid(
            field, "must be a string without quotes, backslashes or control characters");
      }
      out.put(name, s);
    }
    return out;
  }

  private static String lastLine(String output) {
    String trimmed = output.strip();
    int nl = trimmed.lastIndexOf('\n');
    return nl < 0 ? trimmed : trimmed.substring(nl + 1);
  }

  private static JsonObject toJson(Row r) {
    return new JsonObject()
        .put("id", r.getString("id"))
        .put("address", r.getString("host"))
        .put("port", r.getInteger("port"))
        .put("user", r.getString("username"))
        .put("keyId", r.getString("key_id"))
        .put("hostKeyFingerprint", r.getString("host_key_fingerprint"))
        .put("state", r.getString("state"))
        .put("message", r.getString("message"))
        .put("machineId", r.getString("machine_id"))
        .put("createdAt", Json.time(r.getOffsetDateTime("created_at")))
        .put("updatedAt", Json.time(r.getOffsetDateTime("updated_at")));
  }
}
