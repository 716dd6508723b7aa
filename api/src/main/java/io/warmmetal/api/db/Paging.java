package io.warmmetal.api.db;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlClient;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Cursor pagination over a {@code seq} column: pages are stable under inserts, and the cursor is
 * the last {@code seq} returned (opaque to clients).
 */
public final class Paging {
  private Paging() {}

  /** One page of items, and the cursor of the next (null on the last page). */
  public record Page<T>(List<T> items, String nextCursor) {}

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
    return rows(db, select, seqColumn, filter, cursor, limit, mapper)
        .map(
            page ->
                new JsonObject()
                    .put("items", new JsonArray(page.items()))
                    .put("nextCursor", page.nextCursor()));
  }

  /** As {@link #page}, each row mapped to what the caller needs. */
  public static <T> Future<Page<T>> rows(
      SqlClient db,
      String select,
      String seqColumn,
      Filter filter,
      String cursor,
      int limit,
      Function<Row, T> mapper) {
    if (cursor != null) {
      filter.where(seqColumn + " > ?", Long.parseLong(cursor));
    }
    String sql =
        select + filter.sql() + " ORDER BY " + seqColumn + " LIMIT " + filter.param(limit + 1);
    return db.preparedQuery(sql).execute(filter.tuple()).map(rows -> toPage(rows, limit, mapper));
  }

  private static <T> Page<T> toPage(RowSet<Row> rows, int limit, Function<Row, T> mapper) {
    List<T> items = new ArrayList<>();
    Long lastSeq = null;
    int n = 0;
    for (Row r : rows) {
      if (n++ == limit) {
        break;
      }
      items.add(mapper.apply(r));
      lastSeq = r.getLong("seq");
    }
    return new Page<>(items, rows.size() > limit ? String.valueOf(lastSeq) : null);
  }
}
