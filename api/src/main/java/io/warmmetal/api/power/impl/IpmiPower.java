package io.warmmetal.api.power.impl;

import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;
import io.warmmetal.api.power.IpmiTarget;
import io.warmmetal.api.power.PowerDriver;
import io.warmmetal.api.power.PowerState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@link PowerDriver} on {@code ipmitool} (Debian's ipmitool; lanplus, cipher suite 3 — without a
 * fixed suite every call waits seconds on discovery). Runs on a worker thread with a cleared
 * environment holding only the password ({@code -E}: ipmitool reads {@code IPMI_PASSWORD}), and is
 * killed at its timeout.
 */
public final class IpmiPower implements PowerDriver {
  private final WorkerExecutor workers;
  private final IpmiTarget target;
  private final Duration timeout;

  public IpmiPower(WorkerExecutor workers, IpmiTarget target, Duration timeout) {
    this.workers = workers;
    this.target = target;
    this.timeout = timeout;
  }

  @Override
  public Future<PowerState> status() {
    return chassis("status")
        .map(
            out -> {
              if (out.contains("Chassis Power is on")) {
                return PowerState.ON;
              }
              if (out.contains("Chassis Power is off")) {
                return PowerState.OFF;
              }
              throw new IllegalStateException(
                  "BMC " + target + " answered an unknown power status: " + out.trim());
            });
  }

  @Override
  public Future<Void> on() {
    return chassis("on").mapEmpty();
  }

  @Override
  public Future<Void> off() {
    return chassis("off").mapEmpty();
  }

  private Future<String> chassis(String action) {
    return workers.executeBlocking(
        () ->
            run(
                List.of(
                    "ipmitool",
                    "-I",
                    "lanplus",
                    "-C",
                    "3",
                    "-N",
                    "1",
                    "-R",
                    "2",
                    "-H",
                    target.host(),
                    "-p",
                    String.valueOf(target.port()),
                    "-U",
                    target.username(),
                    "-E",
                    "chassis",
                    "power",
                    action)),
        false);
  }

  private String run(List<String> command) throws IOException, InterruptedException {
    Path log = Files.createTempFile("warmmetal-ipmi", ".out");
    try {
      ProcessBuilder builder =
          new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
      Map<String, String> env = builder.environment();
      env.clear();
      env.put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
      env.put("IPMI_PASSWORD", target.password());
      Process p = builder.start();
      p.getOutputStream().close();
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(
            "BMC " + target + " did not answer within " + timeout.toSeconds() + " s");
      }
      String out = Files.readString(log, StandardCharsets.UTF_8);
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            "BMC "
                + target
                + " refused 'chassis power "
                + command.get(command.size() - 1)
                + "': "
                + out.trim());
      }
      return out;
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
