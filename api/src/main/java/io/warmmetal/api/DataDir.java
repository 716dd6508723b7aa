package io.warmmetal.api;

import io.warmmetal.api.config.ApiConfig;
import io.warmmetal.api.crypto.SecretBox;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The data directory: 0711, so the unprivileged embedded PostgreSQL can pass through it while
 * nobody else can list it; each secret file in it is 0600. Blocking: call from worker threads.
 */
final class DataDir {
  private DataDir() {}

  static void create(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      Files.createDirectories(dir);
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
    }
  }

  static SecretBox secretBox(ApiConfig config) throws IOException {
    return SecretBox.load(config.secretKey().map(ApiConfig.Secret::value), config.dataDir());
  }

  /** Reads a secret file, or creates it (0600) with {@code fresh} if it does not exist. */
  static String readOrCreateSecret(Path file, String fresh) throws IOException {
    if (Files.exists(file)) {
      return Files.readString(file).trim();
    }
    Files.createFile(
        file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(file, fresh + "\n");
    return fresh;
  }
}
