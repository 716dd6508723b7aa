package io.warmmetal.api.lifecycle;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;
import java.util.Optional;

/**
 * The hardware an operator registered beforehand, as the enrolling transaction uses it: new
 * hardware from a network boot whose identity matches a record is admitted at once. The core
 * defines what it needs; the hardware edge, which owns the records, provides it.
 */
public interface HardwareInventory {

  /**
   * A record that matched: its id (the MAC or system UUID it was registered under) and the labels
   * it gives.
   */
  record Match(String recordId, JsonObject labels) {}

  /**
   * In {@code tx}: the record matching {@code host}'s reported identity, if any, now marked as
   * enrolled by {@code machineId}.
   */
  Future<Optional<Match>> admit(SqlConnection tx, Host host, String machineId);

  /** No records at all (for a core used without the hardware edge). */
  HardwareInventory NONE = (tx, host, machineId) -> Future.succeededFuture(Optional.empty());
}
