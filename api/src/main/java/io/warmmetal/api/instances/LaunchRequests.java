package io.warmmetal.api.instances;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.lifecycle.Caller;
import io.warmmetal.api.lifecycle.LaunchSpec;
import java.util.Base64;
import java.util.List;

/**
 * Turns a contract-valid launch body into a {@link LaunchSpec}, checking what a schema cannot say.
 */
final class LaunchRequests {
  static final int MAX_USER_DATA_BYTES = 64 * 1024;

  private LaunchRequests() {}

  static LaunchSpec parse(JsonObject body, Caller caller) {
    List<String> shapes = shapes(body);
    int minCount = body.getInteger("minCount", 1);
    int maxCount = body.getInteger("maxCount", minCount);
    if (maxCount < minCount) {
      throw ApiError.invalid(
          "maxCount", "maxCount (" + maxCount + ") must not be below minCount (" + minCount + ")");
    }
    if (body.containsKey("userData") && body.containsKey("kubernetes")) {
      // The agent either joins the cluster with the join block or runs the user data: say which.
      throw ApiError.invalid("userData", "give userData or kubernetes, not both");
    }
    boolean standby = body.getBoolean("standby", false);
    boolean allowPreJoined = body.getBoolean("allowPreJoined", false);
    preJoining(body, standby, allowPreJoined);
    return new LaunchSpec(
        caller,
        shapes,
        minCount,
        maxCount,
        body.getString("clientToken"),
        body.getJsonObject("labels", new JsonObject()),
        body.getJsonObject("kubernetes"),
        userData(body),
        body.getBoolean("allowPreparing", false) || body.getBoolean("allowStandby", false),
        body.getBoolean("allowStandby", false),
        body.getJsonObject("machineLabels", new JsonObject()),
        standby,
        allowPreJoined);
  }

  /**
   * Pre-joined standby is about a cluster: a standby launch joins one ahead of time, and a launch
   * that takes a pre-joined machine finds it by the cluster its join names.
   */
  private static void preJoining(JsonObject body, boolean standby, boolean allowPreJoined) {
    if (standby && body.containsKey("userData")) {
      throw ApiError.invalid(
          "userData",
          "a standby launch joins a cluster ahead of time: give kubernetes, not userData");
    }
    if (standby && allowPreJoined) {
      throw ApiError.invalid(
          "allowPreJoined",
          "a standby launch takes no pre-joined machine: give standby or allowPreJoined");
    }
    if ((standby || allowPreJoined) && !body.containsKey("kubernetes")) {
      throw ApiError.invalid(
          "kubernetes",
          (standby ? "standby" : "allowPreJoined")
              + " needs kubernetes: the cluster the machines join (or joined)");
    }
  }

  private static List<String> shapes(JsonObject body) {
    boolean one = body.containsKey("shape");
    JsonArray many = body.getJsonArray("shapes");
    if (one && many != null) {
      throw ApiError.invalid("shapes", "give either shape or shapes, not both");
    }
    if (!one && many == null) {
      throw ApiError.invalid("shape", "shape (or shapes, in order of preference) is required");
    }
    return one ? List.of(body.getString("shape")) : many.stream().map(String::valueOf).toList();
  }

  private static byte[] userData(JsonObject body) {
    String encoded = body.getString("userData");
    if (encoded == null) {
      return null;
    }
    byte[] decoded;
    try {
      decoded = Base64.getDecoder().decode(encoded);
    } catch (IllegalArgumentException e) {
      throw ApiError.invalid("userData", "userData is not valid base64");
    }
    if (decoded.length > MAX_USER_DATA_BYTES) {
      throw ApiError.invalid(
          "userData",
          "userData is " + decoded.length + " bytes decoded; the limit is " + MAX_USER_DATA_BYTES);
    }
    return decoded;
  }
}
