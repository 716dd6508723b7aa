package io.warmmetal.api.events;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.warmmetal.api.db.Filter;
import io.warmmetal.api.http.Json;

/**
 * Reads the event log with a since-cursor.
 *
 * <p>Event sequence numbers are taken when an event is written but become visible when its transaction commits, so
 * a later number can be seen before an earlier one. A reader that jumped past the earlier one would never see it;
 * so the log only hands out events older than {@link #SETTLE_MILLIS}, by which time every transaction that wrote
 * them has finished (they last milliseconds). The price is that delay before an event can be read.
 */
public final class EventLog {
  static final int SETTLE_MILLIS = 300;

  private EventLog() {}

  public static Future<JsonObject> since(SqlClient db, String since, String machineId, String instanceId,
      int limit) {
    long after = since == null ? 0 : Long.parseLong(since);
    Filter f = new Filter()
        .where("seq > ?", after)
        .where("at < clock_timestamp() - make_interval(secs => ?)", SETTLE_MILLIS / 1000.0)
        .whereIfPresent("machine_id = ?", machineId)
        .whereIfPresent("instance_id = ?", instanceId);
    String sql = "SELECT * FROM events" + f.sql() + " ORDER BY seq LIMIT " + f.param(limit);
    return db.preparedQuery(sql).execute(f.tuple()).map(rows -> {
      JsonArray items = new JsonArray();
      long last = after;
      for (Row r : rows) {
        items.add(toJson(r));
        last = r.getLong("seq");
      }
      return new JsonObject().put("items", items).put("nextCursor", String.valueOf(last));
    });
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
