package io.warmmetal.api.power;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.warmmetal.api.power.impl.IpmiPower;
import java.time.Duration;

/**
 * Switches a server's power through its out-of-band controller. Every call runs off the event loop, has a timeout,
 * and fails with a message that names what went wrong (never a credential).
 */
public interface PowerDriver {
  Future<PowerState> status();

  Future<Void> on();

  Future<Void> off();

  /** IPMI over LAN via {@code ipmitool -I lanplus}; the password goes by environment, never on a command line. */
  static PowerDriver ipmi(Vertx vertx, IpmiTarget target, Duration timeout) {
    return new IpmiPower(vertx, target, timeout);
  }
}
