package io.warmmetal.e2e.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A server for a real node, as a prepared host would be before WarmMetal's agent gets it: in the
 * control plane's network namespace, with a mount namespace of its own so that what kubeadm and the
 * kubelet write — {@code /etc/kubernetes}, {@code /var/lib} (kubelet, containerd, CNI state, the
 * agent's state), {@code /etc/cni}, {@code /run}, {@code /var/log}, {@code /etc/hosts} — stays in
 * this host's directory; containerd running (the native snapshotter, a bridge CNI network, the
 * sandbox image loaded from a local archive); the images test pods use in an archive directory for
 * the agent's prepare to load. Pods go under the sandbox's cgroup root. The host's processes are
 * the namespace's and go with the sandbox.
 */
public final class NodeHost implements AutoCloseable {
  /** The pod sandbox image the runtime is configured with, and what test pods run. */
  public static final String PAUSE_IMAGE = "warmmetal.test/pause:1";

  public static final String BUSYBOX_IMAGE = "warmmetal.test/busybox:1";
  static final String CRI_SOCKET = "/run/containerd/containerd.sock";

  private final ControlPlane cluster;
  private final String name;
  private final Path dir;
  private Daemon containerd;

  private NodeHost(ControlPlane cluster, String name, Path dir) {
    this.cluster = cluster;
    this.name = name;
    this.dir = dir;
  }

  /**
   * Sets up the host {@code name} (one per control plane: the kubelet's ports are the namespace's).
   */
  public static NodeHost create(ControlPlane cluster, String name) throws Exception {
    NodeHost host =
        new NodeHost(cluster, name, cluster.sandbox().dir.resolve("hosts").resolve(name));
    host.setUp();
    return host;
  }

  private void setUp() throws Exception {
    Files.createDirectories(dir);
    // A mount namespace kept by a file: it must sit on a private mount.
    Commands.run("mount", "--bind", dir.toString(), dir.toString());
    Commands.run("mount", "--make-private", dir.toString());
    Path mnt = dir.resolve("mnt");
    Files.createFile(mnt);
    Commands.run("unshare", "--mount=" + mnt, "--propagation", "private", "true");
    Path root = dir.resolve("root");
    for (Map.Entry<String, String> bind :
        Map.of(
                "etc-kubernetes",
                "/etc/kubernetes",
                "var-lib",
                "/var/lib",
                "etc-cni",
                "/etc/cni",
                "var-log",
                "/var/log")
            .entrySet()) {
      Path source = root.resolve(bind.getKey());
      Files.createDirectories(source);
      Files.createDirectories(
          Path.of(bind.getValue())); // the mount point; empty on this machine if it was not there
      Commands.run(
          inMountNamespace(List.of("mount", "--bind", source.toString(), bind.getValue())));
    }
    Commands.run(
        inMountNamespace(List.of("mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run")));
    // Its name resolves (kubeadm and the kubelet look it up); there is no DNS server in the
    // namespace: fail fast.
    Files.writeString(
        root.resolve("hosts"),
        "127.0.0.1 localhost\n" + cluster.network().nodeAddress() + " " + name + "\n");
    Files.writeString(root.resolve("resolv.conf"), "nameserver 127.0.0.1\n");
    Commands.run(
        inMountNamespace(
            List.of("mount", "--bind", root.resolve("hosts").toString(), "/etc/hosts")));
    Commands.run(
        inMountNamespace(
            List.of(
                "mount", "--bind", root.resolve("resolv.conf").toString(), "/etc/resolv.conf")));
    for (Path hierarchy : cgroupHierarchies()) {
      Files.createDirectories(hierarchy.resolve(cluster.sandbox().cgroupRoot().substring(1)));
    }

    Files.createDirectories(root.resolve("etc-cni/net.d"));
    Files.writeString(
        root.resolve("etc-cni/net.d/10-warmmetal-e2e.conflist"),
        """
        {"cniVersion": "0.4.0", "name": "warmmetal-e2e", "plugins": [{"type": "bridge", "bridge": "cni0",
         "isGateway": true, "ipMasq": false, "ipam": {"type": "host-local",
         "ranges": [[{"subnet": "10.244.0.0/16"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
        """);
    Path config = dir.resolve("containerd.toml");
    Files.writeString(
        config,
        """
        version = 2
        root = "/var/lib/containerd"
        state = "/run/containerd"
        disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.aufs",
          "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
        [grpc]
          address = "%s"
        [plugins."io.containerd.grpc.v1.cri"]
          sandbox_image = "%s"
          # This machine drops CAP_SYS_RESOURCE: runc cannot lower a sandbox's oom_score_adj to -998.
          restrict_oom_score_adj = true
          [plugins."io.containerd.grpc.v1.cri".containerd]
            snapshotter = "native"
          [plugins."io.containerd.grpc.v1.cri".cni]
            bin_dir = "/usr/lib/cni"
            conf_dir = "/etc/cni/net.d"
        """
            .formatted(CRI_SOCKET, PAUSE_IMAGE));
    containerd =
        Daemon.start(
            name + "-containerd",
            enter(List.of("containerd", "--config", config.toString())),
            dir.resolve("containerd.log"),
            Map.of());
    long deadline = System.currentTimeMillis() + 30_000;
    while (!Commands.attempt(enter(List.of("ctr", "-a", CRI_SOCKET, "version")), Map.of(), 10)
        .ok()) {
      containerd.checkAlive();
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("containerd did not answer:\n" + containerd.tail(20));
      }
      Thread.sleep(100);
    }
    KubeBinaries.buildTestImages(images());
  }

  private static List<Path> cgroupHierarchies() throws IOException {
    try (var list = Files.list(Path.of("/sys/fs/cgroup"))) {
      return list.filter(Files::isDirectory).toList();
    }
  }

  /** Image archives (pause, busybox) the agent's prepare loads: the host has no registry. */
  public Path images() {
    return dir.resolve("images");
  }

  public String name() {
    return name;
  }

  /** The address the kubelet here takes as its node IP. */
  public String address() {
    return cluster.network().nodeAddress();
  }

  /** {@code command}, run on this host: its network and its mounts. */
  public List<String> enter(List<String> command) {
    List<String> wrapped =
        new ArrayList<>(
            List.of(
                "nsenter",
                "--net=/var/run/netns/" + cluster.network().name(),
                "--mount=" + dir.resolve("mnt"),
                "--"));
    wrapped.addAll(command);
    return wrapped;
  }

  private List<String> inMountNamespace(List<String> command) {
    List<String> wrapped =
        new ArrayList<>(List.of("nsenter", "--mount=" + dir.resolve("mnt"), "--"));
    wrapped.addAll(command);
    return wrapped;
  }

  /** Runs {@code command} on this host to completion, with the Kubernetes binaries on its PATH. */
  public Commands.Result run(String... command) {
    return Commands.attempt(enter(List.of(command)), Map.of("PATH", path()), 60);
  }

  /** A PATH with the Kubernetes binaries first, as a prepared host has them in /usr/bin. */
  public static String path() {
    return KubeBinaries.dir() + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  }

  /** Starts a long-running process on this host (the agent), logging to {@code log}. */
  public Daemon start(String what, List<String> command, Map<String, String> env) {
    Map<String, String> all = new HashMap<>(env);
    all.putIfAbsent("PATH", path());
    return Daemon.start(name + "-" + what, enter(command), dir.resolve(what + ".log"), all);
  }

  /**
   * The kubelet's last log lines (the join script starts it, logging under /run/warmmetal), for
   * failures.
   */
  public String kubeletLogTail() {
    return run("tail", "-n", "40", "/run/warmmetal/kubelet.log").output();
  }

  /**
   * Stops everything on this host — the agent, the kubelet it started, containerd and its shims
   * (every process in the mount namespace), the pods' containers (the sandbox's cgroup root) — and
   * removes its mounts and files.
   */
  @Override
  public void close() {
    try {
      String ns = "mnt:[" + Files.getAttribute(dir.resolve("mnt"), "unix:ino") + "]";
      for (int round = 0; round < 20; round++) {
        List<String> pids = new ArrayList<>();
        try (var procs = Files.list(Path.of("/proc"))) {
          procs
              .filter(p -> p.getFileName().toString().matches("\\d+"))
              .forEach(
                  p -> {
                    try {
                      if (Files.readSymbolicLink(p.resolve("ns/mnt")).toString().equals(ns)) {
                        pids.add(p.getFileName().toString());
                      }
                    } catch (Exception gone) {
                      // exited meanwhile, or not ours to read
                    }
                  });
        }
        if (pids.isEmpty()) {
          break;
        }
        pids.forEach(pid -> Commands.attempt("kill", "-9", pid));
        Thread.sleep(100);
      }
    } catch (Exception e) {
      // the namespace is gone already
    }
    if (containerd != null) {
      containerd.close();
    }
    Sandbox.killCgroups(cluster.sandbox().cgroupRoot().substring(1) + "/kubepods");
    Sandbox.unmountUnder(dir);
    Sandbox.deleteTree(dir);
  }
}
