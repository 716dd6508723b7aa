package io.warmmetal.api.events;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.db.Filter;
import io.warmmetal.api.http.Json;

/**
 * Reads the event log with a since-cursor.
 *
 * <p>An event's sequence number is taken when it is written but becomes visible when its
 * transaction commits, so a later number can be seen before an earlier one. The log therefore hands
 * out only events of transactions older than every transaction still running ({@code
 * pg_snapshot_xmin}) — those can no longer change — in (transaction id, seq) order; the cursor is
 * the last event's {@code xid-seq}. Each event is read exactly once, however long the transaction
 * that wrote it took; an event waits only while an older transaction is still open.
 */
public final class EventLog {
  private EventLog() {}

  /** {@code project}: only events of that project's instances; null: every event. */
  public static Future<JsonObject> since(
      SqlClient db, String project, String since, String machineId, String instanceId, int limit) {
    return cursor(db, since)
        .compose(
            after -> {
              Filter f =
                  new Filter()
                      .where("(xid, seq) > (?::text::xid8, ?)", after.xid(), after.seq())
                      .where("xid < pg_snapshot_xmin(pg_current_snapshot())")
                      .whereIfPresent("machine_id = ?", machineId)
                      .whereIfPresent("instance_id = ?", instanceId)
                      .whereIfPresent(
                          "instance_id IN (SELECT id FROM instances WHERE project = ?)", project);
              String sql =
                  "SELECT *, xid::text AS xid_text FROM events"
                      + f.sql()
                      + " ORDER BY xid, seq LIMIT "
                      + f.param(limit);
              return db.preparedQuery(sql)
                  .execute(f.tuple())
                  .map(
                      rows -> {
                        JsonArray items = new JsonArray();
                        String next = since == null ? "0" : since;
                        for (Row r : rows) {
                          items.add(toJson(r));
                          next = r.getString("xid_text") + "-" + r.getLong("seq");
                        }
                        return new JsonObject().put("items", items).put("nextCursor", next);
                      });
            });
  }

  private record Position(String xid, long seq) {}

  /**
   * {@code xid-seq}; a bare number is a cursor from before transactions were recorded (a seq): the
   * position of that event.
   */
  private static Future<Position> cursor(SqlClient db, String since) {
    if (since == null || since.equals("0")) {
      return Future.succeededFuture(new Position("0", 0));
    }
    int dot = since.indexOf('-');
    if (dot > 0) {
      return Future.succeededFuture(
          new Position(since.substring(0, dot), Long.parseLong(since.substring(dot + 1))));
    }
    long seq = Long.parseLong(since);
    return db.preparedQuery("SELECT xid::text AS x FROM events WHERE seq = $1")
        .execute(Tuple.of(seq))
        .map(
            rows ->
                new Position(rows.size() == 0 ? "0" : rows.iterator().next().getString("x"), seq));
  }

  private static JsonObject toJson(Row r) {
    return new JsonObject()
        .put("seq", String.valueOf(r.getLong("seq")))
        .put("at", Json.time(r.getOffsetDateTime("at")))
        .put("type", r.getString("type"))
        .put("subject", r.getString("subject"))
        .put("machineId", r.getString("machine_id"))
        .put("instanceId", r.getString("instance_id"))
        .put("from", r.getString("from_state"))
        .put("to", r.getString("to_state"))
        .put("reason", r.getString("reason"))
        .put("details", r.getJsonObject("details"));
  }
}
