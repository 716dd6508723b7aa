package io.warmmetal.e2e.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * WarmMetal's node image, as {@code images/node/build.sh} builds it — for the cluster's Kubernetes
 * version (the binaries {@link KubeBinaries} found) and the agent jar this build made — installed
 * into a boot directory the API serves. The build caches each layer outside the work tree by its
 * inputs, so after a machine's first build this takes seconds.
 */
public final class NodeImage {
  private NodeImage() {}

  /**
   * Builds (or finds in the cache) the image and installs it into {@code bootDir}; {@code
   * extraImages}, if not null, is a directory of image archives the node imports (a different set
   * makes a different image version). {@code makeDefault}: servers no pool names an image for boot
   * it. Answers its version.
   */
  public static String install(Path bootDir, Path agentJar, Path extraImages, boolean makeDefault) {
    List<String> command =
        new ArrayList<>(
            List.of(
                "bash",
                script().toString(),
                "--kube-bin",
                KubeBinaries.dir().toString(),
                "--agent-jar",
                agentJar.toString(),
                "--install",
                bootDir.toString()));
    if (extraImages != null) {
      command.addAll(List.of("--images", extraImages.toString()));
    }
    if (!makeDefault) {
      command.add("--no-default");
    }
    String out = Commands.run(command, Map.of(), 3600).strip();
    Path dir = Path.of(out.substring(out.lastIndexOf('\n') + 1).strip());
    if (!Files.isRegularFile(dir.resolve("image.json"))) {
      throw new IllegalStateException("images/node/build.sh installed no image:\n" + out);
    }
    return dir.getFileName().toString();
  }

  /** The build script, from the e2e module (Maven's working directory) or the repository root. */
  static Path script() {
    for (Path p : List.of(Path.of("../images/node/build.sh"), Path.of("images/node/build.sh"))) {
      if (Files.exists(p)) {
        return p.toAbsolutePath().normalize();
      }
    }
    throw new IllegalStateException(
        "images/node/build.sh not found from " + Path.of("").toAbsolutePath());
  }
}
