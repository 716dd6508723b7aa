package io.warmmetal.protocol;

import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Typed reads of a frame's fields: a field of the wrong type, or a required one missing, is a
 * {@link MalformedFrame} naming it — never a ClassCastException or a null further on.
 */
public final class Fields {
  private Fields() {}

  public static String string(JsonObject json, String key) {
    String value = optionalString(json, key);
    if (value == null) {
      throw new MalformedFrame(key + " is required");
    }
    return value;
  }

  public static String optionalString(JsonObject json, String key) {
    Object value = json.getValue(key);
    if (value != null && !(value instanceof String)) {
      throw new MalformedFrame(key + " must be a string");
    }
    return (String) value;
  }

  public static long number(JsonObject json, String key) {
    if (json.getValue(key) == null) {
      throw new MalformedFrame(key + " is required");
    }
    return number(json, key, 0);
  }

  public static long number(JsonObject json, String key, long absent) {
    Object value = json.getValue(key);
    if (value == null) {
      return absent;
    }
    if (!(value instanceof Number n)) {
      throw new MalformedFrame(key + " must be a number");
    }
    return n.longValue();
  }

  /** An object, or an empty one when absent. */
  public static JsonObject object(JsonObject json, String key) {
    Object value = json.getValue(key);
    if (value == null) {
      return new JsonObject();
    }
    if (!(value instanceof JsonObject object)) {
      throw new MalformedFrame(key + " must be an object");
    }
    return object;
  }

  /** A map of string values (labels), empty when absent. */
  public static Map<String, String> strings(JsonObject json, String key) {
    return stringMap(object(json, key), key);
  }

  /**
   * An object of string values (labels) as a map, empty for null; {@code name} names it in an
   * error.
   */
  public static Map<String, String> stringMap(JsonObject object, String name) {
    Map<String, String> out = new LinkedHashMap<>();
    if (object != null) {
      object.forEach(
          e -> {
            if (!(e.getValue() instanceof String value)) {
              throw new MalformedFrame(name + "." + e.getKey() + " must be a string");
            }
            out.put(e.getKey(), value);
          });
    }
    return out;
  }

  /** Labels as a JSON object. */
  public static JsonObject toObject(Map<String, String> strings) {
    return new JsonObject(new LinkedHashMap<String, Object>(strings));
  }
}
