package io.warmmetal.e2e.bench;

import io.warmmetal.e2e.cluster.ControlPlane;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The controller as deploy/ runs it — its own JVM ({@code warmmetal-controller.jar}, the JDK's
 * defaults), its ServiceAccount's token in a kubeconfig — so that a benchmark can say what the
 * controller alone costs: its CPU from {@code /proc}, its heap from its GC log (the live heap: what
 * is left after each collection).
 */
final class ControllerProcess implements AutoCloseable {
  private static final Pattern AFTER_GC = Pattern.compile("\\d+M->(\\d+)M\\((\\d+)M\\)");
  private static final long TICKS_PER_SECOND = 100; // /proc/<pid>/stat counts in 1/100 s

  private final Process process;
  private final Path gcLog;

  private ControllerProcess(Process process, Path gcLog) {
    this.process = process;
    this.gcLog = gcLog;
  }

  /** Starts the controller against the cluster, as {@code token}'s ServiceAccount. */
  static ControllerProcess start(ControlPlane cluster, String token, boolean nudgePods)
      throws IOException {
    Path root = Files.isDirectory(Path.of("..", "controller")) ? Path.of("..") : Path.of(".");
    Path jar = root.resolve("controller/target/warmmetal-controller.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(jar + " is missing: mvn -B -q install -DskipTests first");
    }
    Path dir = Files.createTempDirectory("warmmetal-controller-bench");
    Path kubeconfig = dir.resolve("kubeconfig");
    Files.writeString(
        kubeconfig,
        String.join(
            "\n",
            "apiVersion: v1",
            "kind: Config",
            "clusters:",
            "- name: bench",
            "  cluster:",
            "    server: https://" + cluster.endpoint(),
            "    certificate-authority-data: " + cluster.admin().getConfiguration().getCaCertData(),
            "users:",
            "- name: controller",
            "  user:",
            "    token: " + token,
            "contexts:",
            "- name: bench",
            "  context: {cluster: bench, user: controller, namespace: warmmetal-system}",
            "current-context: bench",
            ""));
    Path gcLog = dir.resolve("gc.log");
    String java = ProcessHandle.current().info().command().orElse("java");
    ProcessBuilder builder =
        new ProcessBuilder(
            List.of(
                java,
                "-Xlog:gc:file=" + gcLog,
                "-jar",
                jar.toString(),
                // As Installation.startController: these clusters run no DaemonSets, and the
                // scenarios count 100m and 256 MiB a node.
                "--reserved-cpu=100",
                "--reserved-memory-mib=256",
                "--metrics-port=0",
                nudgePods ? "--nudge-pods" : "--no-nudge-pods"));
    builder.environment().put("KUBECONFIG", kubeconfig.toString());
    builder.redirectErrorStream(true).redirectOutput(dir.resolve("controller.log").toFile());
    System.out.println("controller process: logs in " + dir);
    return new ControllerProcess(builder.start(), gcLog);
  }

  /** CPU seconds the controller has used so far. */
  double cpuSeconds() throws IOException {
    String stat = Files.readString(Path.of("/proc", String.valueOf(process.pid()), "stat"));
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    // utime and stime: fields 14 and 15 of the whole line, 12 and 13 after "pid (comm) ".
    return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / (double) TICKS_PER_SECOND;
  }

  /** Lines of its GC log so far: a mark to read the heap from. */
  int gcMark() throws IOException {
    return Files.exists(gcLog) ? Files.readAllLines(gcLog).size() : 0;
  }

  /** The largest heap left after a collection since the mark, in MiB (its live heap). */
  long liveHeapMiBSince(int mark) throws IOException {
    List<String> lines = Files.readAllLines(gcLog);
    long max = 0;
    for (String line : lines.subList(Math.min(mark, lines.size()), lines.size())) {
      Matcher m = AFTER_GC.matcher(line);
      if (m.find()) {
        max = Math.max(max, Long.parseLong(m.group(1)));
      }
    }
    return max;
  }

  /** Its resident memory now, in MiB. */
  long residentMiB() throws IOException {
    for (String line :
        Files.readAllLines(Path.of("/proc", String.valueOf(process.pid()), "status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("\\D", "")) / 1024;
      }
    }
    return 0;
  }

  @Override
  public void close() {
    process.destroy();
    try {
      process.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
