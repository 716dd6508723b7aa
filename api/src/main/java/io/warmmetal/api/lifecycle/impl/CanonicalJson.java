package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.TreeMap;

/**
 * JSON with object keys sorted at every level, so equal requests hash equally whatever their key
 * order.
 */
final class CanonicalJson {
  private CanonicalJson() {}

  static String encode(JsonObject json) {
    return new JsonObject(sorted(json)).encode();
  }

  private static Map<String, Object> sorted(JsonObject json) {
    Map<String, Object> out = new TreeMap<>();
    for (Map.Entry<String, Object> e : json) {
      out.put(e.getKey(), canonical(e.getValue()));
    }
    return out;
  }

  private static Object canonical(Object v) {
    if (v instanceof JsonObject o) {
      return new JsonObject(sorted(o));
    }
    if (v instanceof JsonArray a) {
      JsonArray out = new JsonArray();
      a.forEach(x -> out.add(canonical(x)));
      return out;
    }
    return v;
  }
}
