package io.warmmetal.api.hardware;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.db.Filter;
import io.warmmetal.api.db.Paging;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import io.warmmetal.api.http.Json;
import io.warmmetal.api.lifecycle.HardwareInventory;
import io.warmmetal.api.lifecycle.Host;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Hardware the operator expects, registered before it boots (as MAAS commissions and Tinkerbell
 * matches hardware records): a record is named by the MAC or system UUID it was registered under
 * and may require the other one too. New hardware that enrolls through a network boot matching a
 * record is admitted at once, with the record's labels; anything else waits for an operator to
 * accept it. A record vouches for an identity an agent merely reports, so it is worth what the
 * rack's wiring is worth: register records shortly before the servers boot.
 */
public final class HardwareRecords implements HardwareInventory {
  private static final Pattern MAC = Pattern.compile("[0-9a-f]{2}([:-][0-9a-f]{2}){5}");

  private final Pool db;

  public HardwareRecords(Pool db) {
    this.db = db;
  }

  /**
   * An identity as records and machines spell it: a MAC lowercase with colons, a UUID lowercase.
   */
  static String canonical(String identity) {
    String lower = identity.toLowerCase(Locale.ROOT);
    return MAC.matcher(lower).matches() ? lower.replace('-', ':') : lower;
  }

  static boolean isMac(String canonical) {
    return MAC.matcher(canonical).matches();
  }

  /**
   * Registers (or replaces) the record {@code id}; the body may name the other identity too ({@code
   * primaryMac} for a record named by its UUID, {@code systemUuid} for one named by its MAC), and
   * labels. Answers the record.
   */
  Future<JsonObject> put(String id, JsonObject body) {
    String key = canonical(id);
    boolean byMac = isMac(key);
    String mac = optional(body, "primaryMac");
    String uuid = optional(body, "systemUuid");
    if (byMac && mac != null && !mac.equals(key)) {
      throw ApiError.invalid(
          "primaryMac", "record " + key + " is named by its MAC; primaryMac may only repeat it");
    }
    if (!byMac && uuid != null && !uuid.equals(key)) {
      throw ApiError.invalid(
          "systemUuid",
          "record " + key + " is named by its system UUID; systemUuid may only" + " repeat it");
    }
    String recordMac = byMac ? key : mac;
    String recordUuid = byMac ? uuid : key;
    return db.preparedQuery(
            """
            INSERT INTO hardware (id, primary_mac, system_uuid, labels) VALUES ($1, $2, $3, $4)
            ON CONFLICT (id) DO UPDATE SET primary_mac = $2, system_uuid = $3, labels = $4, updated_at = now()
            RETURNING *""")
        .execute(
            Tuple.of(key, recordMac, recordUuid, body.getJsonObject("labels", new JsonObject())))
        .map(rows -> toJson(rows.iterator().next()))
        .recover(err -> Future.failedFuture(clash(err)));
  }

  /** The record named {@code id}, or the one holding that MAC or UUID; 404 if none. */
  Future<JsonObject> get(String id) {
    return db.preparedQuery(
            "SELECT * FROM hardware WHERE id = $1 OR primary_mac = $1 OR system_uuid = $1 LIMIT 1")
        .execute(Tuple.of(canonical(id)))
        .map(
            rows -> {
              if (rows.size() == 0) {
                throw ApiError.notFound("hardware record", id);
              }
              return toJson(rows.iterator().next());
            });
  }

  Future<JsonObject> list(String cursor, int limit) {
    return Paging.page(
        db, "SELECT * FROM hardware", "seq", new Filter(), cursor, limit, HardwareRecords::toJson);
  }

  Future<Void> delete(String id) {
    return db.preparedQuery(
            "DELETE FROM hardware WHERE id = $1 OR primary_mac = $1 OR system_uuid = $1")
        .execute(Tuple.of(canonical(id)))
        .map(
            rows -> {
              if (rows.rowCount() == 0) {
                throw ApiError.notFound("hardware record", id);
              }
              return null;
            });
  }

  /**
   * The records the host's reported identity matches — every identity a record holds must be the
   * host's — marked as enrolled by {@code machineId}; their labels merged, oldest record first.
   */
  @Override
  public Future<Optional<Match>> admit(SqlConnection tx, Host host, String machineId) {
    String mac = host.primaryMac() == null ? null : canonical(host.primaryMac());
    String uuid = host.systemUuid() == null ? null : canonical(host.systemUuid());
    if (mac == null && uuid == null) {
      return Future.succeededFuture(Optional.empty());
    }
    return tx.preparedQuery(
            """
            WITH matched AS (
              UPDATE hardware SET machine_id = $3
              WHERE (primary_mac = $1 OR system_uuid = $2)
                AND (primary_mac IS NULL OR primary_mac = $1) AND (system_uuid IS NULL OR system_uuid = $2)
              RETURNING seq, id, labels)
            SELECT id, labels FROM matched ORDER BY seq""")
        .execute(Tuple.of(mac, uuid, machineId))
        .map(
            rows -> {
              String first = null;
              JsonObject labels = new JsonObject();
              for (Row r : rows) {
                first = first == null ? r.getString("id") : first;
                labels.mergeIn(r.getJsonObject("labels"));
              }
              return first == null
                  ? Optional.<Match>empty()
                  : Optional.of(new Match(first, labels));
            });
  }

  private static String optional(JsonObject body, String field) {
    String value = body.getString(field);
    return value == null ? null : canonical(value);
  }

  /** Another record holds that MAC or UUID: 409 naming it. */
  private static Throwable clash(Throwable err) {
    if (err instanceof PgException pg && "23505".equals(pg.getSqlState())) {
      String field =
          "hardware_primary_mac_key".equals(pg.getConstraint()) ? "primaryMac" : "systemUuid";
      return new ApiError(
          ErrorCode.Conflict,
          "another hardware record holds this " + field + " (GET /v1/hardware/<it> shows which)",
          field,
          null);
    }
    return err;
  }

  static JsonObject toJson(Row r) {
    return new JsonObject()
        .put("id", r.getString("id"))
        .put("primaryMac", r.getString("primary_mac"))
        .put("systemUuid", r.getString("system_uuid"))
        .put("labels", r.getJsonObject("labels"))
        .put("machineId", r.getString("machine_id"))
        .put("createdAt", Json.time(r.getOffsetDateTime("created_at")))
        .put("updatedAt", Json.time(r.getOffsetDateTime("updated_at")));
  }
}
