package io.warmmetal.e2e.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * What one run of the cluster fixture owns on this host: a directory (certificates, data, logs,
 * node roots), a network namespace, a link to it, and a cgroup root for pods — all named by one
 * short id, recorded under {@code /var/tmp/warmmetal-e2e/<id>} with the owning JVM's pid. Closing
 * removes all of it; creating one first removes what runs whose JVM died (killed, crashed) left
 * behind.
 */
public final class Sandbox implements AutoCloseable {
  static final Path ROOT =
      Path.of(System.getenv().getOrDefault("WARMMETAL_E2E_DIR", "/var/tmp/warmmetal-e2e"));
  private static final String[] CGROUP_HIERARCHIES = {
    "cpu",
    "cpuacct",
    "cpuset",
    "memory",
    "devices",
    "freezer",
    "blkio",
    "pids",
    "systemd",
    "hugetlb",
    "net_cls",
    "net_prio",
    "perf_event",
    "rdma",
    "unified",
    ""
  };

  public final String id;
  public final Path dir;

  private Sandbox(String id, Path dir) {
    this.id = id;
    this.dir = dir;
  }

  public static Sandbox create() throws IOException {
    removeLeftovers();
    String id = HexFormat.of().formatHex(SecureRandom.getSeed(2));
    Path dir = ROOT.resolve(id);
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("owner"), String.valueOf(ProcessHandle.current().pid()));
    return new Sandbox(id, dir);
  }

  /** The network namespace's name. */
  public String netns() {
    return "wm-e2e-" + id;
  }

  /** The host end of the link into the namespace (interface names are at most 15 characters). */
  public String hostLink() {
    return "wmh-" + id;
  }

  /** The cgroup under which the sandbox's kubelets put their pods ({@code cgroupRoot}). */
  public String cgroupRoot() {
    return "/warmmetal-e2e-" + id;
  }

  @Override
  public void close() {
    teardown(id, dir);
  }

  /** Tears down every sandbox whose owning JVM is gone. */
  static void removeLeftovers() throws IOException {
    if (!Files.isDirectory(ROOT)) {
      return;
    }
    try (Stream<Path> dirs = Files.list(ROOT)) {
      for (Path dir : dirs.toList()) {
        Path owner = dir.resolve("owner");
        boolean alive = false;
        try {
          alive =
              ProcessHandle.of(Long.parseLong(Files.readString(owner).trim()))
                  .map(ProcessHandle::isAlive)
                  .orElse(false);
        } catch (IOException | NumberFormatException e) {
          // no owner recorded: a half-made sandbox
        }
        if (!alive) {
          System.err.println("cluster fixture: removing what an earlier run left in " + dir);
          teardown(dir.getFileName().toString(), dir);
        }
      }
    }
  }

  /**
   * Processes, pods' cgroups, mounts, links, the namespace, the files: each step best effort, all
   * idempotent.
   */
  private static void teardown(String id, Path dir) {
    String netns = "wm-e2e-" + id;
    for (int round = 0; round < 20; round++) {
      String pids = Commands.attempt("ip", "netns", "pids", netns).output().strip();
      if (pids.isEmpty() || pids.contains("No such file") || pids.contains("Invalid")) {
        break;
      }
      for (String pid : pids.split("\\s+")) {
        Commands.attempt("kill", "-9", pid);
      }
      sleep(100);
    }
    killCgroups("warmmetal-e2e-" + id);
    unmountUnder(dir);
    Commands.attempt("ip", "link", "del", "wmh-" + id);
    Commands.attempt("ip", "netns", "del", netns);
    deleteTree(dir);
  }

  /**
   * Kills every process in the cgroup subtree (pods' containers live in namespaces of their own)
   * and removes it.
   */
  static void killCgroups(String name) {
    for (String hierarchy : CGROUP_HIERARCHIES) {
      Path root = Path.of("/sys/fs/cgroup", hierarchy, name);
      if (!Files.isDirectory(root)) {
        continue;
      }
      for (int round = 0; round < 20; round++) {
        List<Path> groups = subtree(root);
        boolean any = false;
        for (Path group : groups) {
          try {
            for (String pid : Files.readAllLines(group.resolve("cgroup.procs"))) {
              if (!pid.isBlank()) {
                any = true;
                Commands.attempt("kill", "-9", pid.strip());
              }
            }
          } catch (IOException e) {
            // gone meanwhile
          }
        }
        if (!any) {
          break;
        }
        sleep(100);
      }
      subtree(root).forEach(group -> group.toFile().delete()); // rmdir, deepest first
    }
  }

  private static List<Path> subtree(Path root) {
    try (Stream<Path> walk = Files.walk(root)) {
      return walk.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  /**
   * Unmounts everything mounted at or below {@code dir} (bind mounts of node roots, mount
   * namespaces), deepest first.
   */
  static void unmountUnder(Path dir) {
    List<String> points = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
        String point = line.split(" ")[4].replace("\\040", " ");
        if (point.equals(dir.toString()) || point.startsWith(dir + "/")) {
          points.add(point);
        }
      }
    } catch (IOException e) {
      return;
    }
    points.stream()
        .sorted(Comparator.reverseOrder())
        .forEach(p -> Commands.attempt("umount", "-l", p));
  }

  static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      Commands.attempt("rm", "-rf", dir.toString());
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
