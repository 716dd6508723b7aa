package io.warmmetal.api.lifecycle;

import io.vertx.core.Future;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads of one record by id, in the caller's transaction or not (a missing one is refused as {@code
 * NotFound}), and the fleet's counts.
 */
public final class Lookups {
  private Lookups() {}

  public static Future<Machine> machine(SqlClient db, String id) {
    return db.preparedQuery("SELECT * FROM machines WHERE id = $1")
        .execute(Tuple.of(id))
        .map(
            rows -> {
              if (rows.size() == 0) {
                throw Refusal.notFound("machine", id);
              }
              return Machine.from(rows.iterator().next());
            });
  }

  public static Future<Instance> instance(SqlClient db, String id) {
    return db.preparedQuery(Instance.SELECT + " WHERE i.id = $1")
        .execute(Tuple.of(id))
        .map(
            rows -> {
              if (rows.size() == 0) {
                throw Refusal.notFound("instance", id);
              }
              return Instance.from(rows.iterator().next());
            });
  }

  /** A launch's instances in the order they were claimed. */
  public static Future<List<Instance>> instancesOfLaunch(SqlClient db, String launchId) {
    return db.preparedQuery(Instance.SELECT + " WHERE i.launch_id = $1 ORDER BY i.seq")
        .execute(Tuple.of(launchId))
        .map(
            rows -> {
              List<Instance> out = new ArrayList<>();
              rows.forEach(r -> out.add(Instance.from(r)));
              return out;
            });
  }

  /**
   * Machines per shape and per state, every state of a shape that has machines counted (0 where
   * none: a gauge with no series reads as "no data", not as none warm). Reads every machine: not
   * for a hot path.
   */
  public static Future<Map<String, Map<String, Long>>> machineCounts(SqlClient db) {
    return db.query("SELECT shape, state, count(*) AS n FROM machines GROUP BY shape, state")
        .execute()
        .map(
            rows -> {
              Map<String, Map<String, Long>> counts = new HashMap<>();
              rows.forEach(
                  r ->
                      counts
                          .computeIfAbsent(r.getString("shape"), s -> zeroForEveryState())
                          .put(r.getString("state"), r.getLong("n")));
              return counts;
            });
  }

  private static Map<String, Long> zeroForEveryState() {
    Map<String, Long> zeros = new HashMap<>();
    for (MachineState state : MachineState.values()) {
      zeros.put(state.wire(), 0L);
    }
    return zeros;
  }
}
