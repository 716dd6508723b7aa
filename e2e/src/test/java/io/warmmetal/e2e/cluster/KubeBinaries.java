package io.warmmetal.e2e.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Where the Kubernetes server binaries are: {@code WARMMETAL_KUBE_BIN} if set, else what {@code
 * e2e/cluster/build-kubernetes.sh} prints — it builds them from Debian's source package on a
 * machine's first run (minutes) and answers from its cache afterwards (at once).
 */
public final class KubeBinaries {
  private static Path dir;

  private KubeBinaries() {}

  public static synchronized Path dir() {
    if (dir == null) {
      String given = System.getenv("WARMMETAL_KUBE_BIN");
      if (given != null && !given.isBlank()) {
        dir = Path.of(given);
      } else {
        String out = Commands.run(List.of("bash", script().toString()), Map.of(), 3600).strip();
        dir = Path.of(out.substring(out.lastIndexOf('\n') + 1).strip());
      }
      for (String b :
          List.of(
              "kube-apiserver",
              "kube-controller-manager",
              "kube-scheduler",
              "kubelet",
              "kubeadm")) {
        if (!Files.isExecutable(dir.resolve(b))) {
          throw new IllegalStateException("no " + b + " in " + dir);
        }
      }
    }
    return dir;
  }

  /**
   * What the agent's join should know about the kubelet ({@code kubelet.env} beside it, written by
   * the build: {@code WARMMETAL_KUBELET_FAST_STATUS}); empty for a build from before it.
   */
  public static Map<String, String> kubeletEnvironment() {
    Path file = dir().resolve("kubelet.env");
    Map<String, String> env = new HashMap<>();
    try {
      if (Files.exists(file)) {
        for (String line : Files.readAllLines(file)) {
          int eq = line.indexOf('=');
          if (eq > 0 && !line.startsWith("#")) {
            env.put(line.substring(0, eq).strip(), line.substring(eq + 1).strip());
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return env;
  }

  /**
   * The tag of the pause image built beside them (build/pause's TAG): the node image's sandbox
   * image.
   */
  public static String pauseTag() {
    try {
      return Files.readString(dir().resolve("pause.tag")).strip();
    } catch (IOException e) {
      throw new IllegalStateException(
          "no pause.tag in " + dir() + ": run e2e/cluster/build-kubernetes.sh", e);
    }
  }

  /**
   * Builds the test images ({@code warmmetal.test/pause:1}, {@code warmmetal.test/busybox:1}) into
   * {@code out} as archives a node imports: {@code cluster/build-images.sh}.
   */
  public static Path buildTestImages(Path out) {
    Commands.run(
        List.of("bash", script().resolveSibling("build-images.sh").toString(), out.toString()));
    return out;
  }

  public static Path of(String binary) {
    return dir().resolve(binary);
  }

  /** The build script, from the e2e module (Maven's working directory) or the repository root. */
  static Path script() {
    for (Path p :
        List.of(
            Path.of("cluster/build-kubernetes.sh"), Path.of("e2e/cluster/build-kubernetes.sh"))) {
      if (Files.exists(p)) {
        return p.toAbsolutePath();
      }
    }
    throw new IllegalStateException(
        "e2e/cluster/build-kubernetes.sh not found from " + Path.of("").toAbsolutePath());
  }
}
