package io.warmmetal.api.db;

import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds a parameterised {@code WHERE} clause: each condition uses {@code ?} for its parameters,
 * renumbered to PostgreSQL's {@code $n}. Values never enter the SQL text.
 */
public final class Filter {
  private final List<String> conditions = new ArrayList<>();
  private final List<Object> params = new ArrayList<>();

  public Filter where(String condition, Object... values) {
    StringBuilder sql = new StringBuilder();
    int next = 0;
    for (char c : condition.toCharArray()) {
      if (c == '?') {
        params.add(values[next++]);
        sql.append('$').append(params.size());
      } else {
        sql.append(c);
      }
    }
    if (next != values.length) {
      throw new IllegalArgumentException("placeholders and values differ in: " + condition);
    }
    conditions.add(sql.toString());
    return this;
  }

  /** Adds the condition only when {@code value} is not null. */
  public Filter whereIfPresent(String condition, Object value) {
    return value == null ? this : where(condition, value);
  }

  /** {@code WHERE a AND b …}, or an empty string. */
  public String sql() {
    return conditions.isEmpty() ? "" : " WHERE " + String.join(" AND ", conditions);
  }

  /** The placeholder for one more parameter (e.g. a LIMIT), registering its value. */
  public String param(Object value) {
    params.add(value);
    return "$" + params.size();
  }

  public Tuple tuple() {
    return Tuple.wrap(new ArrayList<>(params));
  }
}
