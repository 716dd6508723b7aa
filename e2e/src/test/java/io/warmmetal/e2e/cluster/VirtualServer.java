package io.warmmetal.e2e.cluster;

import io.warmmetal.api.testing.RequiredTool;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A server in a {@link Rack}: a QEMU machine (software emulation — KVM does not work on these hosts) with a virtio
 * NIC on the rack's LAN whose iPXE ROM network-boots it, a fixed MAC and SMBIOS UUID (its hardware identity), its
 * serial console in a file. A reboot inside the guest boots it from the network again, as a real server's firmware
 * would. Nothing is on it but what it boots.
 */
public final class VirtualServer implements AutoCloseable {
  private final Rack rack;
  private final String name;
  private final String mac;
  private final String uuid;
  private final Path console;
  private final String tap;
  private final Daemon qemu;
  private final long poweredOnNanos;

  private VirtualServer(Rack rack, String name, String mac, String uuid, Path console, String tap, Daemon qemu,
      long poweredOnNanos) {
    this.rack = rack;
    this.name = name;
    this.mac = mac;
    this.uuid = uuid;
    this.console = console;
    this.tap = tap;
    this.qemu = qemu;
    this.poweredOnNanos = poweredOnNanos;
  }

  /**
   * Powers on server number {@code index} (its MAC and UUID follow from it) with {@code memoryMiB} of RAM and
   * {@code cpus} virtual CPUs; {@code dataDisk}, if not null, is a disk image it gets as its second drive.
   */
  public static VirtualServer powerOn(Rack rack, int index, int memoryMiB, int cpus, Path dataDisk) throws IOException {
    RequiredTool.onPath("qemu-system-x86_64", "qemu-system-x86");
    RequiredTool.directory(Path.of("/usr/lib/ipxe/qemu"), "ipxe-qemu"); // the NIC's iPXE ROM it boots from
    String name = "vm-" + index;
    String mac = String.format("52:54:00:7a:%02x:%02x", (index >> 8) & 0xff, index & 0xff);
    String uuid = new UUID(0x7761726d6d6574aL, index).toString();
    Path console = rack.dir().resolve(name + ".console");
    Files.deleteIfExists(console);
    rack.expect(mac, uuid);
    String tap = rack.plugIn();
    List<String> command = new ArrayList<>(List.of("qemu-system-x86_64", "-name", name, "-accel", "tcg,thread=multi",
        "-smp", String.valueOf(cpus), "-m", String.valueOf(memoryMiB), "-nographic", "-nodefaults",
        "-serial", "file:" + console, "-monitor", "none", "-boot", "n", "-uuid", uuid,
        "-netdev", "tap,id=n0,ifname=" + tap + ",script=no,downscript=no",
        "-device", "virtio-net-pci,netdev=n0,mac=" + mac, "-device", "virtio-rng-pci"));
    if (dataDisk != null) {
      command.addAll(List.of("-drive", "file=" + dataDisk + ",if=virtio,format=raw"));
    }
    long now = System.nanoTime();
    Daemon qemu = Daemon.start(name + "-qemu", rack.cluster().network().enter(command),
        rack.dir().resolve(name + ".qemu.log"), Map.of());
    return new VirtualServer(rack, name, mac, uuid, console, tap, qemu, now);
  }

  public String name() {
    return name;
  }

  public String mac() {
    return mac;
  }

  public String uuid() {
    return uuid;
  }

  /** When it was powered on ({@link System#nanoTime()}). */
  public long poweredOnNanos() {
    return poweredOnNanos;
  }

  /** Fails, with its console's tail, if QEMU has exited (the server is off). */
  public void checkRunning() {
    if (!qemu.alive()) {
      throw new IllegalStateException(name + " is off (QEMU exited):\n" + qemu.tail(10) + "\nconsole:\n"
          + console(40));
    }
  }

  /** Its serial console so far. */
  public String console() {
    try {
      return Files.exists(console) ? Files.readString(console) : "";
    } catch (IOException e) {
      return "(console unreadable: " + e.getMessage() + ")";
    }
  }

  /** The console's last lines (control characters dropped), for a failure's message. */
  public String console(int lines) {
    List<String> all = console().replaceAll("\u001b\\[[0-9;?]*[A-Za-z]", "").lines().toList();
    return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
  }

  /**
   * The QEMU process's resident memory in MiB: the guest RAM the server has touched so far (QEMU allocates it on
   * first touch) plus QEMU's own few tens of MiB — an upper bound of what the booted OS uses, page cache included.
   */
  public long residentMiB() {
    try {
      String status = Files.readString(Path.of("/proc", String.valueOf(qemu.pid()), "status"));
      return status.lines().filter(l -> l.startsWith("VmRSS:")).findFirst()
          .map(l -> Long.parseLong(l.replaceAll("\\D", "")) / 1024).orElseThrow();
    } catch (IOException e) {
      throw new IllegalStateException(name + " is off: " + e.getMessage(), e);
    }
  }

  /** Cuts the power. */
  @Override
  public void close() {
    qemu.close();
    rack.unplug(tap);
  }
}
