package io.warmmetal.api.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a test tier needs of the machine (docs/testing.md). Missing, it fails the test that needs it
 * — never skips it: a tier that was asked for runs whole, or says what to install.
 */
public final class RequiredTool {
  private static final String HOW = " (.ci/run installs every tier's tools; docs/testing.md)";

  private RequiredTool() {}

  /** {@code path}, executable; else fails naming it and the Debian package that has it. */
  public static Path at(Path path, String debianPackage) {
    if (!Files.isExecutable(path)) {
      throw new AssertionError(path + " is missing: apt-get install " + debianPackage + HOW);
    }
    return path;
  }

  /** {@code name}, found on PATH; else fails naming it and the Debian package that has it. */
  public static Path onPath(String name, String debianPackage) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
        return Path.of(dir, name);
      }
    }
    throw new AssertionError(name + " is not on PATH: apt-get install " + debianPackage + HOW);
  }

  /**
   * A directory a Debian package installs (firmware, ROMs); else fails naming it and the package.
   */
  public static Path directory(Path path, String debianPackage) {
    if (!Files.isDirectory(path)) {
      throw new AssertionError(path + " is missing: apt-get install " + debianPackage + HOW);
    }
    return path;
  }

  /** Root; else fails saying what needs it. */
  public static void root(String what) {
    if (!"root".equals(System.getProperty("user.name"))) {
      throw new AssertionError(
          what
              + " needs root; this JVM runs as "
              + System.getProperty("user.name")
              + " (the cluster tier: sudo mvn -B verify -Pcluster; docs/testing.md)");
    }
  }
}
