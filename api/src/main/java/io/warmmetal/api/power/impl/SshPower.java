package io.warmmetal.api.power.impl;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.warmmetal.api.power.PowerDriver;
import io.warmmetal.api.power.PowerState;
import io.warmmetal.api.power.WakeOnLan;
import io.warmmetal.api.ssh.Shell;
import io.warmmetal.api.ssh.SshRunner;
import io.warmmetal.api.ssh.SshTarget;
import java.net.InetAddress;
import java.time.Duration;

/**
 * Power without a BMC: off is the operating system's own power-off, run over SSH (detached, so the
 * session ends cleanly before the server goes); on is a Wake-on-LAN magic packet to the NIC; the
 * status is whether the server answers over SSH.
 */
public final class SshPower implements PowerDriver {
  private final Vertx vertx;
  private final SshRunner ssh;
  private final SshTarget target;
  private final String offCommand;
  private final String mac;
  private final String wakeAddress;
  private final int wakePort;
  private final Duration timeout;

  public SshPower(
      Vertx vertx,
      SshRunner ssh,
      SshTarget target,
      String offCommand,
      String mac,
      String wakeAddress,
      int wakePort,
      Duration timeout) {
    this.vertx = vertx;
    this.ssh = ssh;
    this.target = target;
    this.offCommand = offCommand;
    this.mac = mac;
    this.wakeAddress = wakeAddress;
    this.wakePort = wakePort;
    this.timeout = timeout;
  }

  @Override
  public Future<PowerState> status() {
    return ssh.run(target, "true", null, timeout)
        .map(r -> PowerState.ON)
        .otherwise(PowerState.OFF); // no SSH answer: as good as off (a hung OS looks the same)
  }

  @Override
  public Future<Void> on() {
    return vertx.executeBlocking(
        () -> {
          WakeOnLan.wake(mac, InetAddress.getByName(wakeAddress), wakePort);
          return null;
        },
        false);
  }

  @Override
  public Future<Void> off() {
    return ssh.run(
            target,
            "nohup sh -c "
                + Shell.quote("sleep 1; " + offCommand)
                + " >/dev/null 2>&1 </dev/null &",
            null,
            timeout)
        .map(
            r -> {
              if (!r.succeeded()) {
                throw new IllegalStateException(
                    "power-off over SSH failed on " + target + ": " + r.stderr().trim());
              }
              return null;
            });
  }
}
