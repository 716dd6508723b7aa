package io.warmmetal.protocol.commands;

import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.Fields;
import io.warmmetal.protocol.MalformedFrame;

/**
 * A taint the joining Node registers with; {@code value} may be null (none). As {@code Taint} in
 * openapi.yaml.
 */
public record Taint(String key, String value, String effect) {
  public Taint {
    if (key == null || effect == null) {
      throw new MalformedFrame("a taint has a key and an effect");
    }
  }

  public static Taint fromJson(JsonObject json) {
    return new Taint(
        Fields.string(json, "key"),
        Fields.optionalString(json, "value"),
        Fields.string(json, "effect"));
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("key", key);
    if (value != null) {
      json.put("value", value);
    }
    return json.put("effect", effect);
  }
}
