package io.warmmetal.e2e.cluster;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A long-running process of the cluster (etcd, kube-apiserver, containerd, kubelet, an agent)
 * logging to a file.
 */
public final class Daemon implements AutoCloseable {
  private final String name;
  private final Process process;
  private final Path log;

  private Daemon(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
  }

  public static Daemon start(String name, List<String> command, Path log, Map<String, String> env) {
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    pb.environment().putAll(env);
    try {
      return new Daemon(name, pb.start(), log);
    } catch (IOException e) {
      throw new IllegalStateException("cannot start " + name + ": " + e.getMessage(), e);
    }
  }

  public boolean alive() {
    return process.isAlive();
  }

  public long pid() {
    return process.pid();
  }

  public Path log() {
    return log;
  }

  /** The log's last lines, to say why something did not come up. */
  public String tail(int lines) {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  /** Fails with the log's tail if the process has exited. */
  public void checkAlive() {
    if (!process.isAlive()) {
      throw new IllegalStateException(name + " exited " + process.exitValue() + ":\n" + tail(30));
    }
  }

  /** SIGTERM, a few seconds' grace, then SIGKILL for it and anything it started. */
  @Override
  public void close() {
    var children = process.descendants().toList();
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    children.forEach(ProcessHandle::destroyForcibly);
  }

  @Override
  public String toString() {
    return name + " (pid " + process.pid() + ")";
  }
}
