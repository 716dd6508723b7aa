package io.warmmetal.api.power;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.warmmetal.api.power.impl.IpmiPower;
import io.warmmetal.api.power.impl.RedfishPower;
import io.warmmetal.api.power.impl.SshPower;
import io.warmmetal.api.ssh.SshRunner;
import io.warmmetal.api.ssh.SshTarget;
import java.time.Duration;

/**
 * Switches a server's power through its out-of-band controller. Every call runs off the event loop,
 * has a timeout, and fails with a message that names what went wrong (never a credential).
 */
public interface PowerDriver {
  Future<PowerState> status();

  Future<Void> on();

  Future<Void> off();

  /** Redfish over HTTPS ({@code ComputerSystem.Reset}); the BMC is trusted by its pin only. */
  static PowerDriver redfish(Vertx vertx, RedfishTarget target, Duration timeout) {
    return new RedfishPower(vertx, target, timeout);
  }

  /** The server's own power-off over SSH, and Wake-on-LAN to start it. */
  static PowerDriver ssh(
      Vertx vertx,
      SshRunner ssh,
      SshTarget target,
      String offCommand,
      String mac,
      String wakeAddress,
      int wakePort,
      Duration timeout) {
    return new SshPower(vertx, ssh, target, offCommand, mac, wakeAddress, wakePort, timeout);
  }

  /**
   * IPMI over LAN via {@code ipmitool -I lanplus}; the password goes by environment, never on a
   * command line.
   */
  static PowerDriver ipmi(WorkerExecutor workers, IpmiTarget target, Duration timeout) {
    return new IpmiPower(workers, target, timeout);
  }
}
