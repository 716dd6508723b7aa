package io.warmmetal.api.lifecycle;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import java.time.OffsetDateTime;

/**
 * An instance: a machine handed to a launch. Never its secrets (bootstrap token, user data): those
 * stay sealed in the database until the agent's channel delivers the join.
 *
 * @param address its machine's address
 * @param kubernetes the join parameters without the bootstrap token, or null
 * @param standby a standby instance: its join leaves the machine pre-joined, for a launch that
 *     allows it to take without a join
 * @param preJoined launched on a pre-joined machine (taken over from a standby instance): running
 *     from the start, never joined by this instance
 */
public record Instance(
    String id,
    String launchId,
    String project,
    String machineId,
    String shape,
    InstanceState state,
    String stateReason,
    String address,
    JsonObject labels,
    JsonObject kubernetes,
    boolean hasUserData,
    boolean standby,
    boolean preJoined,
    OffsetDateTime createdAt,
    OffsetDateTime runningAt,
    OffsetDateTime terminatedAt) {

  /** Selects what {@link #from} reads; add a WHERE on {@code i.}. */
  public static final String SELECT =
      "SELECT i.*, m.address FROM instances i JOIN machines m ON m.id = i.machine_id";

  public static Instance from(Row r) {
    return new Instance(
        r.getString("id"),
        r.getString("launch_id"),
        r.getString("project"),
        r.getString("machine_id"),
        r.getString("shape"),
        InstanceState.fromWire(r.getString("state")),
        r.getString("state_reason"),
        r.getString("address"),
        r.getJsonObject("labels"),
        r.getJsonObject("kubernetes"),
        r.getBoolean("has_user_data"),
        r.getBoolean("standby"),
        r.getBoolean("pre_joined"),
        r.getOffsetDateTime("created_at"),
        r.getOffsetDateTime("running_at"),
        r.getOffsetDateTime("terminated_at"));
  }

  /** The Kubernetes Node's {@code spec.providerID} for an instance on this machine. */
  public static String providerId(String machineId) {
    return "warmmetal://" + machineId;
  }

  public String providerId() {
    return providerId(machineId);
  }
}
