package io.warmmetal.api.lifecycle;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import java.time.OffsetDateTime;

/**
 * A server of the fleet as the core knows it.
 *
 * @param facts what its agent (or the registration) reported: CPUs, memory, GPUs, architecture
 * @param instanceId the instance it carries, or null
 * @param admitted an operator vouched for it (its token, a registration, a hardware record or an
 *     acceptance); false while new hardware from a network boot waits for acceptance
 */
public record Machine(
    String id,
    String name,
    MachineState state,
    String shape,
    String address,
    JsonObject facts,
    JsonObject labels,
    String systemUuid,
    String primaryMac,
    boolean cordoned,
    String instanceId,
    OffsetDateTime createdAt,
    OffsetDateTime stateChangedAt,
    boolean admitted) {

  /** A {@code machines} row ({@code SELECT *}). */
  public static Machine from(Row r) {
    return new Machine(
        r.getString("id"),
        r.getString("name"),
        MachineState.fromWire(r.getString("state")),
        r.getString("shape"),
        r.getString("address"),
        r.getJsonObject("facts"),
        r.getJsonObject("labels"),
        r.getString("system_uuid"),
        r.getString("primary_mac"),
        r.getBoolean("cordoned"),
        r.getString("instance_id"),
        r.getOffsetDateTime("created_at"),
        r.getOffsetDateTime("state_changed_at"),
        r.getBoolean("admitted"));
  }
}
