package io.warmmetal.api.lifecycle;

/**
 * EC2's instance states: {@code pending → running → shutting-down → terminated}, and {@code
 * failed}.
 */
public enum InstanceState {
  PENDING("pending"),
  RUNNING("running"),
  SHUTTING_DOWN("shutting-down"),
  TERMINATED("terminated"),
  FAILED("failed");

  private final String wire;

  InstanceState(String wire) {
    this.wire = wire;
  }

  public String wire() {
    return wire;
  }

  public static InstanceState fromWire(String s) {
    for (InstanceState m : values()) {
      if (m.wire.equals(s)) {
        return m;
      }
    }
    throw new IllegalArgumentException("unknown instance state " + s);
  }
}
