package io.warmmetal.agent.host;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * What this host is, read from {@code /proc} and {@code /sys}: CPUs, memory, architecture, disks,
 * NICs, and its stable identity (the DMI system UUID, readable by root, and the first physical
 * NIC's MAC); on a server booted from WarmMetal's node image, that image (the file its initramfs
 * writes once the layers matched their digests, and the Kubernetes version it carries). Blocking:
 * call from a worker thread.
 */
public final class HostFacts {
  private final Path proc;
  private final Path sys;
  private final Path imageFile;
  private final String kubernetesVersion;

  public HostFacts(Path proc, Path sys, Path imageFile, String kubernetesVersion) {
    this.proc = proc;
    this.sys = sys;
    this.imageFile = imageFile;
    this.kubernetesVersion = kubernetesVersion;
  }

  public HostFacts(Path proc, Path sys) {
    this(proc, sys, null, null);
  }

  /**
   * This host; {@code imageFile} and {@code kubernetesVersion} (the image's, or null) as the node
   * image has them.
   */
  public static HostFacts ofThisHost(Path imageFile, String kubernetesVersion) {
    return new HostFacts(Path.of("/proc"), Path.of("/sys"), imageFile, kubernetesVersion);
  }

  /** {@code {name, facts, identity}} as enrollment wants them. */
  public JsonObject describe(String name) throws IOException {
    JsonObject identity = new JsonObject();
    read(sys.resolve("class/dmi/id/product_uuid"))
        .ifPresent(uuid -> identity.put("systemUuid", uuid));
    JsonArray nics = nics();
    if (!nics.isEmpty()) {
      identity.put("primaryMac", nics.getJsonObject(0).getString("mac"));
    }
    JsonObject facts =
        new JsonObject()
            .put("cpus", cpus())
            .put("memoryMiB", memoryMiB())
            .put("arch", arch())
            .put("disks", disks())
            .put("nics", nics);
    image().ifPresent(image -> facts.put("image", image));
    return new JsonObject().put("name", name).put("facts", facts).put("identity", identity);
  }

  /** The booted image's version (and Kubernetes version), if this host booted one. */
  private Optional<JsonObject> image() {
    return Optional.ofNullable(imageFile)
        .flatMap(HostFacts::read)
        .flatMap(
            text -> {
              try {
                return Optional.ofNullable(new JsonObject(text).getString("version"))
                    .filter(v -> !v.isBlank());
              } catch (RuntimeException notJson) {
                return Optional.empty();
              }
            })
        .map(
            version -> {
              JsonObject image = new JsonObject().put("version", version);
              if (kubernetesVersion != null && !kubernetesVersion.isBlank()) {
                image.put("kubernetesVersion", kubernetesVersion);
              }
              return image;
            });
  }

  private int cpus() throws IOException {
    try (Stream<String> lines = Files.lines(proc.resolve("cpuinfo"))) {
      long n = lines.filter(l -> l.startsWith("processor")).count();
      return (int) Math.max(1, n);
    }
  }

  private long memoryMiB() throws IOException {
    for (String line : Files.readAllLines(proc.resolve("meminfo"))) {
      if (line.startsWith("MemTotal:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
      }
    }
    throw new IOException("no MemTotal in " + proc.resolve("meminfo"));
  }

  private static String arch() {
    String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
    return switch (arch) {
      case "amd64", "x86_64" -> "x86_64";
      case "aarch64", "arm64" -> "aarch64";
      default -> arch;
    };
  }

  private JsonArray disks() throws IOException {
    JsonArray disks = new JsonArray();
    Path block = sys.resolve("block");
    if (!Files.isDirectory(block)) {
      return disks;
    }
    try (Stream<Path> devices = Files.list(block)) {
      for (Path dev : devices.sorted().toList()) {
        String name = dev.getFileName().toString();
        if (!name.matches("(nvme\\d+n\\d+|sd[a-z]+|vd[a-z]+)")) {
          continue; // partitions, loop devices, RAM disks
        }
        long sectors = Long.parseLong(read(dev.resolve("size")).orElse("0"));
        boolean rotational = "1".equals(read(dev.resolve("queue/rotational")).orElse("0"));
        disks.add(
            new JsonObject()
                .put("name", name)
                .put("sizeGiB", sectors * 512 / (1L << 30))
                .put("type", name.startsWith("nvme") ? "nvme" : rotational ? "hdd" : "ssd"));
      }
    }
    return disks;
  }

  private JsonArray nics() throws IOException {
    JsonArray nics = new JsonArray();
    Path net = sys.resolve("class/net");
    if (!Files.isDirectory(net)) {
      return nics;
    }
    try (Stream<Path> links = Files.list(net)) {
      for (Path link : links.sorted().toList()) {
        String mac = read(link.resolve("address")).orElse("");
        boolean physical = Files.exists(link.resolve("device"));
        if (!physical
            || !mac.matches("[0-9a-f]{2}(:[0-9a-f]{2}){5}")
            || mac.equals("00:00:00:00:00:00")) {
          continue;
        }
        JsonObject nic =
            new JsonObject().put("name", link.getFileName().toString()).put("mac", mac);
        read(link.resolve("speed"))
            .filter(s -> s.matches("\\d+"))
            .ifPresent(s -> nic.put("speedMbps", Integer.parseInt(s)));
        nics.add(nic);
      }
    }
    return nics;
  }

  private static Optional<String> read(Path file) {
    try {
      return Optional.of(Files.readString(file).trim()).filter(s -> !s.isEmpty());
    } catch (IOException | SecurityException e) {
      return Optional.empty();
    }
  }
}
