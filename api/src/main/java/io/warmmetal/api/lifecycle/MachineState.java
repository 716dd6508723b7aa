package io.warmmetal.api.lifecycle;

/**
 * Where a machine is in its life. The happy path is {@code enrolling → preparing → warm → joining →
 * in-use → resetting → preparing → warm}; {@code new} holds hardware that enrolled through a
 * network boot and waits for an operator to accept it (never prepared, claimed or counted by a
 * pool), {@code standby} holds machines the pool does not keep prepared (powered off where power
 * control exists), {@code rebooting} one whose agent was told to reboot (it comes back through the
 * network boot and enrolls again, or reconnects), {@code offline} marks lost heartbeats, {@code
 * failed} quarantines a machine for an operator, {@code retired} is final. {@code pre-joined} holds
 * a machine a standby launch joined to a cluster ahead of time: its standby instance runs, and a
 * launch that allows it takes the machine without a join ({@code pre-joined → in-use}); terminated,
 * it is reset as an {@code in-use} one.
 */
public enum MachineState {
  ENROLLING("enrolling"),
  NEW("new"),
  PREPARING("preparing"),
  WARM("warm"),
  JOINING("joining"),
  IN_USE("in-use"),
  PRE_JOINED("pre-joined"),
  RESETTING("resetting"),
  STANDBY("standby"),
  REBOOTING("rebooting"),
  OFFLINE("offline"),
  FAILED("failed"),
  RETIRED("retired");

  private final String wire;

  MachineState(String wire) {
    this.wire = wire;
  }

  public String wire() {
    return wire;
  }

  public static MachineState fromWire(String s) {
    for (MachineState m : values()) {
      if (m.wire.equals(s)) {
        return m;
      }
    }
    throw new IllegalArgumentException("unknown machine state " + s);
  }
}
