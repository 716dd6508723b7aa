package io.warmmetal.api.lifecycle;

import io.vertx.sqlclient.Row;
import java.time.OffsetDateTime;

/**
 * A command queued for a machine's agent ({@code prepare}, {@code join}, {@code reset}) and how it
 * ended. Commands carry no secrets: a join's parameters stay sealed on its instance.
 *
 * @param status {@code queued}, {@code delivered}, {@code succeeded}, {@code failed} or {@code
 *     cancelled}
 */
public record Command(
    String id,
    String machineId,
    String instanceId,
    String type,
    String status,
    String message,
    OffsetDateTime createdAt,
    OffsetDateTime finishedAt) {

  /** A {@code commands} row ({@code SELECT *}). */
  public static Command from(Row r) {
    return new Command(
        r.getString("id"),
        r.getString("machine_id"),
        r.getString("instance_id"),
        r.getString("type"),
        r.getString("status"),
        r.getString("message"),
        r.getOffsetDateTime("created_at"),
        r.getOffsetDateTime("finished_at"));
  }
}
