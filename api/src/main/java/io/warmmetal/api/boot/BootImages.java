package io.warmmetal.api.boot;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node images the API can boot servers into: each a directory of {@code WARMMETAL_BOOT_DIR}
 * holding what {@code images/node/build.sh --install} put there — {@code image.json} (version,
 * Kubernetes version, kernel parameters, and every file with its size and sha256) and the files.
 * The default image, for servers no pool names one for, is {@code WARMMETAL_BOOT_IMAGE} if set,
 * else the one the {@code default} link points at, else the only one. Read from disk on a worker
 * thread at every call: an operator installs an image without restarting the API.
 */
public final class BootImages {
  /** What a version and a file name may be: one path segment, never {@code ..}. */
  static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._+-]{0,127}");

  private static final Logger LOG = LoggerFactory.getLogger(BootImages.class);

  private final Vertx vertx;
  private final Path dir;
  private final String configuredDefault;

  /** An image: its manifest and where its files are. */
  public record Image(String version, JsonObject manifest, Path dir) {
    public String kubernetesVersion() {
      return manifest.getString("kubernetesVersion");
    }

    /** The squashfs layers, top first. */
    public List<JsonObject> layers() {
      List<JsonObject> layers = new ArrayList<>();
      manifest.getJsonArray("layers", new JsonArray()).forEach(l -> layers.add((JsonObject) l));
      return layers;
    }

    /**
     * Whether {@code name} is one of its files (kernel, initrd, a layer, the manifest or the
     * package list).
     */
    public boolean has(String name) {
      return name.equals("image.json")
          || name.equals("packages.txt")
          || name.equals(manifest.getJsonObject("kernel").getString("name"))
          || name.equals(manifest.getJsonObject("initrd").getString("name"))
          || layers().stream().anyMatch(l -> name.equals(l.getString("name")));
    }
  }

  /** The images found and which one is the default (null when there is none). */
  public record Catalog(List<Image> images, String defaultVersion) {
    public Optional<Image> get(String version) {
      return images.stream().filter(i -> i.version().equals(version)).findFirst();
    }

    public Optional<Image> defaultImage() {
      return defaultVersion == null ? Optional.empty() : get(defaultVersion);
    }
  }

  public BootImages(Vertx vertx, Path dir, String configuredDefault) {
    this.vertx = vertx;
    this.dir = dir;
    this.configuredDefault =
        configuredDefault == null || configuredDefault.isBlank() ? null : configuredDefault;
  }

  public Path dir() {
    return dir;
  }

  public Future<Catalog> catalog() {
    return vertx.executeBlocking(this::read, false);
  }

  private Catalog read() throws IOException {
    if (!Files.isDirectory(dir)) {
      return new Catalog(List.of(), null);
    }
    List<Image> images = new ArrayList<>();
    try (Stream<Path> entries = Files.list(dir)) {
      for (Path entry : entries.sorted().toList()) {
        String name = entry.getFileName().toString();
        Path manifest = entry.resolve("image.json");
        if (!NAME.matcher(name).matches()
            || Files.isSymbolicLink(entry)
            || !Files.isRegularFile(manifest)) {
          continue;
        }
        try {
          JsonObject m = new JsonObject(Files.readString(manifest));
          if (!name.equals(m.getString("version"))
              || m.getJsonObject("kernel") == null
              || m.getJsonObject("initrd") == null) {
            LOG.warn(
                "Skipping boot image {}: its image.json does not describe an image of that version",
                entry);
            continue;
          }
          images.add(new Image(name, m, entry));
        } catch (DecodeException | ClassCastException e) {
          LOG.warn("Skipping boot image {}: image.json is not valid ({})", entry, e.getMessage());
        }
      }
    }
    images.sort(Comparator.comparing(Image::version));
    return new Catalog(List.copyOf(images), defaultVersion(images));
  }

  private String defaultVersion(List<Image> images) throws IOException {
    if (configuredDefault != null) {
      return configuredDefault;
    }
    Path link = dir.resolve("default");
    if (Files.isSymbolicLink(link)) {
      return Files.readSymbolicLink(link).getFileName().toString();
    }
    return images.size() == 1 ? images.get(0).version() : null;
  }
}
