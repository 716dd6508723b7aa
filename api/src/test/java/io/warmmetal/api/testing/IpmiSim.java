package io.warmmetal.api.testing;

import java.io.File;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;

/**
 * A simulated BMC: OpenIPMI's {@code ipmi_sim} (Debian's openipmi, which CI installs) on a free
 * loopback UDP port, user {@code admin}, whose chassis power is a file a hook script keeps — the
 * state a real server's power would be.
 */
public final class IpmiSim implements AutoCloseable {
  public static final Path IPMI_SIM = Path.of("/usr/bin/ipmi_sim");
  public static final String USER = "admin";
  public static final String PASSWORD = "sim-secret";
  public final int port;
  private final Path power;
  private final Process process;

  private IpmiSim(int port, Path power, Process process) {
    this.port = port;
    this.power = power;
    this.process = process;
  }

  public static IpmiSim start() throws Exception {
    RequiredTool.at(IPMI_SIM, "openipmi");
    RequiredTool.onPath("ipmitool", "ipmitool"); // what the API drives it with, as a real BMC
    Path dir = Files.createTempDirectory("warmmetal-ipmisim");
    Path power = dir.resolve("power");
    Files.writeString(power, "0");
    Path hook = dir.resolve("power-hook.sh");
    Files.writeString(
        hook,
        String.join(
            "\n",
            "#!/bin/sh",
            "# ipmi_sim calls: HOOK 0x20 get power | HOOK 0x20 set power 0|1 | HOOK 0x20 set reset 1",
            "state=" + power,
            "case \"$2 $3\" in",
            "  'get power') echo \"power:$(cat $state)\" ;;",
            "  'set power') echo \"$4\" > $state ;;",
            "  *) ;;",
            "esac",
            "exit 0",
            ""));
    Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwx------"));
    int port;
    try (DatagramSocket s = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Path lan = dir.resolve("lan.conf");
    Files.writeString(
        lan,
        String.join(
            "\n",
            "name \"warmmetal-sim\"",
            "set_working_mc 0x20",
            "  startlan 1",
            "    addr 127.0.0.1 " + port,
            "    priv_limit admin",
            "    allowed_auths_callback none md2 md5 straight",
            "    allowed_auths_user none md2 md5 straight",
            "    allowed_auths_operator none md2 md5 straight",
            "    allowed_auths_admin none md2 md5 straight",
            "    guid a123456789abcdefa123456789abcdef",
            "  endlan",
            "  chassis_control \"" + hook + " 0x20\"",
            "  user 2 true  \"" + USER + "\"  \"" + PASSWORD + "\" admin 10  none md2 md5 straight",
            ""));
    Path emu = dir.resolve("sim.emu");
    Files.writeString(
        emu,
        String.join(
            "\n",
            "mc_setbmc 0x20",
            "mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02",
            "sel_enable 0x20 1000 0x0a",
            "mc_enable 0x20",
            ""));
    Files.createDirectories(dir.resolve("state"));
    Process sim =
        new ProcessBuilder(
                IPMI_SIM.toString(),
                "-c",
                lan.toString(),
                "-f",
                emu.toString(),
                "-s",
                dir.resolve("state").toString(),
                "-n")
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("sim.log").toFile())
            .start();
    Path log = dir.resolve("sim.log");
    // UDP has nothing to probe but an IPMI session: ready once a session answers (each probe gives
    // up in ~2 s).
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!answers(port)) {
      if (!sim.isAlive() || System.nanoTime() > deadline) {
        sim.destroyForcibly();
        throw new IllegalStateException("ipmi_sim did not start: " + Files.readString(log));
      }
    }
    return new IpmiSim(port, power, sim);
  }

  /**
   * Whether an IPMI session on {@code port} reads the chassis power (what the API's driver does,
   * but once).
   */
  private static boolean answers(int port) throws Exception {
    ProcessBuilder probe =
        new ProcessBuilder(
                "ipmitool",
                "-I",
                "lanplus",
                "-C",
                "3",
                "-N",
                "1",
                "-R",
                "1",
                "-H",
                "127.0.0.1",
                "-p",
                String.valueOf(port),
                "-U",
                USER,
                "-E",
                "chassis",
                "power",
                "status")
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD);
    probe.environment().put("IPMI_PASSWORD", PASSWORD);
    Process p = probe.start();
    p.getOutputStream().close();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return false;
    }
    return p.exitValue() == 0;
  }

  /** The simulated server's power as its BMC keeps it: true if on. */
  public boolean poweredOn() throws Exception {
    return Files.readString(power).trim().equals("1");
  }

  /** Switches the simulated server by hand (its power button). */
  public void setPower(boolean on) throws Exception {
    Files.writeString(power, on ? "1" : "0");
  }

  @Override
  public void close() throws Exception {
    process.destroy();
    if (!process.waitFor(5, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
