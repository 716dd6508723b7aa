package io.warmmetal.api.http;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.db.Filter;

/**
 * Kubernetes equality-based label selectors over a {@code jsonb} labels column: {@code k=v}, {@code
 * k==v}, {@code k!=v}, {@code k} (exists) and {@code !k} (does not exist), comma-separated, all of
 * which must hold.
 */
public final class LabelSelector {
  private static final String KEY = "([a-z0-9.-]+/)?[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?";
  private static final String VALUE = "([A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?)?";

  private LabelSelector() {}

  /**
   * Adds the selector's conditions on {@code column} to the filter; a malformed selector is a 400.
   */
  public static void apply(String selector, String column, Filter filter) {
    if (selector == null || selector.isBlank()) {
      return;
    }
    for (String raw : selector.split(",")) {
      String term = raw.trim();
      if (term.matches("!" + KEY)) {
        filter.where("NOT jsonb_exists(" + column + ", ?)", term.substring(1));
      } else if (term.matches(KEY)) {
        filter.where("jsonb_exists(" + column + ", ?)", term);
      } else if (term.matches(KEY + "\\s*!=\\s*" + VALUE)) {
        String[] kv = term.split("!=", 2);
        filter.where("NOT " + column + " @> ?", new JsonObject().put(kv[0].trim(), kv[1].trim()));
      } else if (term.matches(KEY + "\\s*==?\\s*" + VALUE)) {
        String[] kv = term.split("==?", 2);
        filter.where(column + " @> ?", new JsonObject().put(kv[0].trim(), kv[1].trim()));
      } else {
        throw ApiError.invalid(
            "labelSelector",
            "cannot parse label selector term '"
                + term
                + "' (use k=v, k!=v, k or !k, comma-separated)");
      }
    }
  }
}
