package io.warmmetal.cli.config;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * {@code ~/.config/warmmetal/config.yaml}: flat {@code key: value} pairs. It holds a token, so it
 * is 0600.
 */
public final class ConfigFile {
  public static final Set<String> KEYS = Set.of("api", "token", "project", "ca-file");
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Set<PosixFilePermission> OWNER =
      EnumSet.of(
          PosixFilePermission.OWNER_READ,
          PosixFilePermission.OWNER_WRITE,
          PosixFilePermission.OWNER_EXECUTE);

  private final Path path;

  public ConfigFile(Path path) {
    this.path = path;
  }

  /**
   * {@code $WARMMETAL_CONFIG}, else {@code $XDG_CONFIG_HOME/warmmetal/config.yaml}, else under the
   * home.
   */
  public static ConfigFile locate(Map<String, String> env) {
    String explicit = env.get("WARMMETAL_CONFIG");
    if (explicit != null && !explicit.isBlank()) {
      return new ConfigFile(Path.of(explicit));
    }
    String xdg = env.get("XDG_CONFIG_HOME");
    Path base =
        xdg != null && !xdg.isBlank()
            ? Path.of(xdg)
            : Path.of(env.getOrDefault("HOME", System.getProperty("user.home")), ".config");
    return new ConfigFile(base.resolve("warmmetal").resolve("config.yaml"));
  }

  public Path path() {
    return path;
  }

  /**
   * The file's permissions if it holds a token and others than its owner may read or write it (as
   * ssh refuses a private key others can read); null if it is private, holds no token, or the file
   * system has no POSIX modes.
   */
  public String exposedToken() {
    try {
      Set<PosixFilePermission> mode = Files.getPosixFilePermissions(path);
      boolean shared = mode.stream().anyMatch(p -> !OWNER.contains(p));
      return shared && read().containsKey("token") ? PosixFilePermissions.toString(mode) : null;
    } catch (NoSuchFileException | UnsupportedOperationException e) {
      return null;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + path + ": " + e.getMessage(), e);
    }
  }

  public Map<String, String> read() {
    Map<String, String> values = new LinkedHashMap<>();
    if (!Files.isRegularFile(path)) {
      return values;
    }
    try {
      var tree = YAML.readTree(path.toFile());
      if (tree != null && tree.isObject()) {
        tree.fields().forEachRemaining(e -> values.put(e.getKey(), e.getValue().asText()));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + path + ": " + e.getMessage(), e);
    }
    return values;
  }

  /**
   * Sets one key; written to a 0600 temporary file beside it, then moved over it, so no reader sees
   * half.
   */
  public void set(String key, String value) throws IOException {
    Map<String, String> values = read();
    values.put(key, value);
    ObjectNode node = YAML.createObjectNode();
    values.forEach(node::put);
    Path dir = path.toAbsolutePath().getParent();
    Files.createDirectories(
        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Path tmp =
        Files.createTempFile(
            dir,
            ".config",
            ".tmp",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    try {
      YAML.writeValue(tmp.toFile(), node);
      Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }
}
