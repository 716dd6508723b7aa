package io.warmmetal.e2e.cluster;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.testing.RequiredTool;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A server in a {@link Rack}: a QEMU machine (software emulation — KVM does not work on these
 * hosts) with a virtio NIC on the rack's LAN whose iPXE ROM network-boots it, a fixed MAC and
 * SMBIOS UUID (its hardware identity), its serial console in a file. A reboot inside the guest
 * boots it from the network again, as a real server's firmware would. Nothing is on it but what it
 * boots.
 */
public final class VirtualServer implements AutoCloseable {
  private static final String BALLOON = "/machine/peripheral/balloon0";

  private final Rack rack;
  private final String name;
  private final String mac;
  private final String uuid;
  private final Path console;

  /** QEMU's machine protocol (QMP) socket: how the host asks about the guest. */
  private final Path qmpSocket;

  private final String tap;
  private final Daemon qemu;
  private final long poweredOnNanos;

  private VirtualServer(
      Rack rack,
      String name,
      String mac,
      String uuid,
      Path console,
      Path qmpSocket,
      String tap,
      Daemon qemu,
      long poweredOnNanos) {
    this.rack = rack;
    this.name = name;
    this.mac = mac;
    this.uuid = uuid;
    this.console = console;
    this.qmpSocket = qmpSocket;
    this.tap = tap;
    this.qemu = qemu;
    this.poweredOnNanos = poweredOnNanos;
  }

  /**
   * Powers on server number {@code index} (its MAC and UUID follow from it) with {@code memoryMiB}
   * of RAM and {@code cpus} virtual CPUs; {@code dataDisk}, if not null, is a disk image it gets as
   * its second drive.
   */
  public static VirtualServer powerOn(Rack rack, int index, int memoryMiB, int cpus, Path dataDisk)
      throws IOException {
    RequiredTool.onPath("qemu-system-x86_64", "qemu-system-x86");
    RequiredTool.directory(
        Path.of("/usr/lib/ipxe/qemu"), "ipxe-qemu"); // the NIC's iPXE ROM it boots from
    String name = "vm-" + index;
    String mac = String.format("52:54:00:7a:%02x:%02x", (index >> 8) & 0xff, index & 0xff);
    String uuid = new UUID(0x7761726d6d6574aL, index).toString();
    Path console = rack.dir().resolve(name + ".console");
    Files.deleteIfExists(console);
    Path qmp = rack.dir().resolve(name + ".qmp");
    Files.deleteIfExists(qmp);
    rack.expect(mac, uuid);
    String tap = rack.plugIn();
    List<String> command =
        new ArrayList<>(
            List.of(
                "qemu-system-x86_64",
                "-name",
                name,
                "-accel",
                "tcg,thread=multi",
                "-smp",
                String.valueOf(cpus),
                "-m",
                String.valueOf(memoryMiB),
                "-nographic",
                "-nodefaults",
                "-serial",
                "file:" + console,
                "-monitor",
                "none",
                "-boot",
                "n",
                "-uuid",
                uuid,
                "-qmp",
                "unix:" + qmp + ",server=on,wait=off",
                "-device",
                "virtio-balloon-pci,id=balloon0",
                "-netdev",
                "tap,id=n0,ifname=" + tap + ",script=no,downscript=no",
                "-device",
                "virtio-net-pci,netdev=n0,mac=" + mac,
                "-device",
                "virtio-rng-pci"));
    if (dataDisk != null) {
      command.addAll(List.of("-drive", "file=" + dataDisk + ",if=virtio,format=raw"));
    }
    long now = System.nanoTime();
    Daemon qemu =
        Daemon.start(
            name + "-qemu",
            rack.cluster().network().enter(command),
            rack.dir().resolve(name + ".qemu.log"),
            Map.of());
    return new VirtualServer(rack, name, mac, uuid, console, qmp, tap, qemu, now);
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
      throw new IllegalStateException(
          name + " is off (QEMU exited):\n" + qemu.tail(10) + "\nconsole:\n" + console(40));
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
   * The guest's memory as its kernel counts it (MiB): all of it, what is available to programs, the
   * page cache.
   */
  public record GuestMemory(long totalMiB, long availableMiB, long cachesMiB) {
    public long usedMiB() {
      return totalMiB - availableMiB;
    }
  }

  /**
   * The guest's memory now, from its balloon driver's statistics (QEMU's QMP: {@code guest-stats}
   * of the virtio-balloon device, which the node image loads), waiting up to {@code timeout} for
   * the first report. Not the QEMU process's resident size: that also holds QEMU's translation
   * cache, up to a GiB under software emulation.
   */
  public GuestMemory memory(Duration timeout) throws IOException, InterruptedException {
    try (SocketChannel qmp = SocketChannel.open(UnixDomainSocketAddress.of(qmpSocket))) {
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(Channels.newInputStream(qmp), StandardCharsets.UTF_8));
      Writer out = new OutputStreamWriter(Channels.newOutputStream(qmp), StandardCharsets.UTF_8);
      in.readLine(); // the greeting
      qmp(in, out, new JsonObject().put("execute", "qmp_capabilities"));
      qmp(
          in,
          out,
          new JsonObject()
              .put("execute", "qom-set")
              .put(
                  "arguments",
                  new JsonObject()
                      .put("path", BALLOON)
                      .put("property", "guest-stats-polling-interval")
                      .put("value", 1)));
      long deadline = System.nanoTime() + timeout.toNanos();
      while (true) {
        JsonObject stats =
            qmp(
                    in,
                    out,
                    new JsonObject()
                        .put("execute", "qom-get")
                        .put(
                            "arguments",
                            new JsonObject().put("path", BALLOON).put("property", "guest-stats")))
                .getJsonObject("stats");
        long total = stats.getLong("stat-total-memory", -1L);
        long available = stats.getLong("stat-available-memory", -1L);
        if (total > 0 && available >= 0) {
          return new GuestMemory(
              total >> 20, available >> 20, stats.getLong("stat-disk-caches", 0L) >> 20);
        }
        if (System.nanoTime() > deadline) {
          throw new IOException(
              name
                  + "'s balloon reported no memory statistics in "
                  + timeout
                  + " (is virtio_balloon loaded?): "
                  + stats);
        }
        Thread.sleep(500);
      }
    }
  }

  /**
   * One QMP command and its answer's {@code return}, skipping the asynchronous events QEMU sends
   * between.
   */
  private JsonObject qmp(BufferedReader in, Writer out, JsonObject command) throws IOException {
    out.write(command.encode() + "\n");
    out.flush();
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      JsonObject answer = new JsonObject(line);
      if (answer.containsKey("error")) {
        throw new IOException(
            name + ": QMP " + command.getString("execute") + ": " + answer.getValue("error"));
      }
      if (answer.containsKey("return")) {
        return answer.getValue("return") instanceof JsonObject r ? r : new JsonObject();
      }
    }
    throw new IOException(name + ": QMP closed (QEMU exited?)");
  }

  /** Cuts the power. */
  @Override
  public void close() {
    qemu.close();
    rack.unplug(tap);
  }
}
