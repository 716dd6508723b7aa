package io.warmmetal.controller.cloudprovider;

import java.time.Instant;
import java.util.Map;

/**
 * An instance as the fleet has it.
 *
 * @param state {@code pending}, {@code running}, {@code shutting-down} or {@code terminated}
 * @param standby launched to stand by pre-joined (a node class's {@code spec.preJoined})
 * @param preJoined handed over already joined: no join was needed
 * @param runningAt when its join finished, or null
 */
public record Instance(
    String id,
    String shape,
    String machineId,
    String providerId,
    String state,
    Map<String, String> labels,
    boolean standby,
    boolean preJoined,
    Instant createdAt,
    Instant runningAt) {

  public static final String RUNNING = "running";
  public static final String TERMINATED = "terminated";

  public boolean running() {
    return RUNNING.equals(state);
  }

  public String label(String key) {
    return labels.get(key);
  }
}
