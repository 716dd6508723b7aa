package io.warmmetal.api.testing;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;

/**
 * Node images for the API's boot routes, without building one: the directory layout
 * images/node/build.sh installs.
 */
public final class BootImageFixture {
  private BootImageFixture() {}

  /**
   * An image directory as build.sh installs one (its files random bytes), with the manifest
   * describing them.
   */
  public static Map<String, byte[]> install(Path bootDir, String version, long seed)
      throws Exception {
    Path dir = Files.createDirectories(bootDir.resolve(version));
    Random random = new Random(seed);
    Map<String, byte[]> files = new HashMap<>();
    JsonArray layers = new JsonArray();
    JsonObject manifest =
        new JsonObject()
            .put("version", version)
            .put("digest", "sha256:" + "0".repeat(64))
            .put("kubernetesVersion", "v1.20.2")
            .put("kernelVersion", "6.1.0-57-amd64")
            .put("os", "Debian 12 (bookworm)")
            .put("cmdline", "quiet systemd.unified_cgroup_hierarchy=0");
    for (String name : new String[] {"vmlinuz", "initrd.img", "agent.squashfs", "os.squashfs"}) {
      byte[] content = new byte[50_000 + random.nextInt(1000)];
      random.nextBytes(content);
      Files.write(dir.resolve(name), content);
      files.put(name, content);
      JsonObject entry =
          new JsonObject()
              .put("name", name)
              .put("size", content.length)
              .put(
                  "sha256",
                  HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content)));
      switch (name) {
        case "vmlinuz" -> manifest.put("kernel", entry);
        case "initrd.img" -> manifest.put("initrd", entry);
        default -> layers.add(entry);
      }
    }
    Files.writeString(dir.resolve("image.json"), manifest.put("layers", layers).encodePrettily());
    Files.writeString(dir.resolve("not-in-the-manifest"), "x");
    return files;
  }
}
