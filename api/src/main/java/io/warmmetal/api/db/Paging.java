package io.warmmetal.api.db;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlClient;
import java.util.function.Function;

/**
 * Cursor pagination over a {@code seq} column: pages are stable under inserts, and the cursor is
 * the last {@code seq} returned (opaque to clients).
 */
public final class Paging {
  private Paging() {}

  /**
   * Runs {@code select} (a query with no WHERE) with the filter, after the cursor, oldest first,
   * and returns {@code {"items": [...], "nextCursor": …}}; {@code nextCursor} is null on the last
   * page.
   */
  public static Future<JsonObject> page(
      SqlClient db,
      String select,
      String seqColumn,
      Filter filter,
      String cursor,
      int limit,
      Function<Row, JsonObject> mapper) {
    if (cursor != null) {
      filter.where(seqColumn + " > ?", Long.parseLong(cursor));
    }
    String sql =
        select + filter.sql() + " ORDER BY " + seqColumn + " LIMIT " + filter.param(limit + 1);
    return db.preparedQuery(sql).execute(filter.tuple()).map(rows -> toPage(rows, limit, mapper));
  }

  private static JsonObject toPage(RowSet<Row> rows, int limit, Function<Row, JsonObject> mapper) {
    JsonArray items = new JsonArray();
    Long lastSeq = null;
    int n = 0;
    for (Row r : rows) {
      if (n++ == limit) {
        break;
      }
      items.add(mapper.apply(r));
      lastSeq = r.getLong("seq");
    }
    String next = rows.size() > limit ? String.valueOf(lastSeq) : null;
    return new JsonObject().put("items", items).put("nextCursor", next);
  }
}
