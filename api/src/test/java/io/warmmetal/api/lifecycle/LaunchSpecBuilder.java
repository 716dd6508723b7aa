package io.warmmetal.api.lifecycle;

import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * A {@link LaunchSpec} for tests: one machine of the given shapes for a caller, no join, unless
 * told otherwise.
 */
final class LaunchSpecBuilder {
  private final Caller caller;
  private final List<String> shapes;
  private int minCount = 1;
  private int maxCount = 1;
  private String clientToken;
  private JsonObject labels = new JsonObject();
  private boolean allowPreparing;
  private boolean allowStandby;
  private JsonObject machineLabels = new JsonObject();
  private JsonObject kubernetes;
  private boolean standby;
  private boolean allowPreJoined;

  private LaunchSpecBuilder(Caller caller, List<String> shapes) {
    this.caller = caller;
    this.shapes = shapes;
  }

  static LaunchSpecBuilder launch(Caller caller, String... shapes) {
    return new LaunchSpecBuilder(caller, List.of(shapes));
  }

  LaunchSpecBuilder count(int min, int max) {
    minCount = min;
    maxCount = max;
    return this;
  }

  LaunchSpecBuilder clientToken(String token) {
    clientToken = token;
    return this;
  }

  LaunchSpecBuilder labels(JsonObject instanceLabels) {
    labels = instanceLabels;
    return this;
  }

  LaunchSpecBuilder allowPreparing() {
    allowPreparing = true;
    return this;
  }

  LaunchSpecBuilder allowStandby() {
    allowStandby = true;
    return this;
  }

  LaunchSpecBuilder onMachinesLabelled(JsonObject required) {
    machineLabels = required;
    return this;
  }

  /** The join block: the cluster the machines join. */
  LaunchSpecBuilder joining(JsonObject join) {
    kubernetes = join;
    return this;
  }

  LaunchSpecBuilder standby() {
    standby = true;
    return this;
  }

  LaunchSpecBuilder allowPreJoined() {
    allowPreJoined = true;
    return this;
  }

  LaunchSpec build() {
    return new LaunchSpec(
        caller,
        shapes,
        minCount,
        maxCount,
        clientToken,
        labels,
        kubernetes,
        null,
        allowPreparing,
        allowStandby,
        machineLabels,
        standby,
        allowPreJoined);
  }
}
