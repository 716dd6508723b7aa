package io.warmmetal.api.lifecycle;

import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * A validated launch request.
 *
 * @param shapes acceptable shape names or aliases, most preferred first
 * @param kubernetes join parameters including the bootstrap token, or null
 * @param userData decoded user data, or null
 * @param allowPreparing also claim machines still being prepared
 * @param allowStandby also claim machines in standby (switched on and prepared for the launch)
 * @param machineLabels only machines whose labels hold every one of these pairs may be claimed
 *     (empty: any)
 * @param standby a standby launch: its machines, once joined, wait pre-joined for a launch that
 *     allows them
 * @param allowPreJoined first take machines pre-joined to the same cluster (the join's apiServer
 *     and caCertHash) by a standby instance of the project, without a join
 */
public record LaunchSpec(
    Caller caller,
    List<String> shapes,
    int minCount,
    int maxCount,
    String clientToken,
    JsonObject labels,
    JsonObject kubernetes,
    byte[] userData,
    boolean allowPreparing,
    boolean allowStandby,
    JsonObject machineLabels,
    boolean standby,
    boolean allowPreJoined) {

  /**
   * The parameters that make two launches "the same" for idempotency: everything but the client
   * token.
   */
  public JsonObject idempotencyView() {
    JsonObject view =
        new JsonObject()
            .put("shapes", shapes)
            .put("minCount", minCount)
            .put("maxCount", maxCount)
            .put("labels", labels)
            .put("kubernetes", kubernetes)
            .put("userData", userData)
            .put("allowPreparing", allowPreparing);
    if (allowStandby) {
      view.put(
          "allowStandby",
          true); // only when asked: the launches recorded before it existed keep their hashes
    }
    if (!machineLabels.isEmpty()) {
      view.put("machineLabels", machineLabels); // likewise
    }
    if (standby) {
      view.put("standby", true); // likewise
    }
    if (allowPreJoined) {
      view.put("allowPreJoined", true); // likewise
    }
    return view;
  }

  /** The join parameters without the bootstrap token, as stored beside the instances. */
  public JsonObject publicJoin() {
    if (kubernetes == null) {
      return null;
    }
    JsonObject copy = kubernetes.copy();
    copy.remove("bootstrapToken");
    return copy;
  }

  public boolean hasSecrets() {
    return userData != null || (kubernetes != null && kubernetes.containsKey("bootstrapToken"));
  }

  @Override
  public String toString() {
    // Never print secrets: records print every component by default.
    return "LaunchSpec[caller="
        + caller.name()
        + ", shapes="
        + shapes
        + ", minCount="
        + minCount
        + ", maxCount="
        + maxCount
        + ", clientToken="
        + clientToken
        + ", machineLabels="
        + machineLabels
        + ", standby="
        + standby
        + ", allowPreJoined="
        + allowPreJoined
        + "]";
  }
}
