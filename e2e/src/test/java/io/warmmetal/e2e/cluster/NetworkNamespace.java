package io.warmmetal.e2e.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The cluster's own network namespace, with no route out. One veth pair links it to this host: the
 * host end has {@link #hostAddress()} (where the test's WarmMetal API listens for agents), the
 * namespace end {@link #address()} (where kube-apiserver listens for the tests). A second veth pair
 * lies wholly inside the namespace and carries its default route to a gateway that does not exist,
 * so kubeadm and the kubelet find a default-route address ({@link #nodeAddress()}) while nothing
 * they send — the kubelet's cloud-metadata probe, image pulls — can leave.
 */
public final class NetworkNamespace {
  private final String name;
  private final int subnet;

  private NetworkNamespace(String name, int subnet) {
    this.name = name;
    this.subnet = subnet;
  }

  static NetworkNamespace create(Sandbox sandbox) {
    int subnet = freeSubnet();
    String ns = sandbox.netns();
    String host = sandbox.hostLink();
    String inside = "wmn-" + sandbox.id;
    Commands.run("ip", "netns", "add", ns);
    Commands.run("ip", "link", "add", host, "type", "veth", "peer", "name", inside);
    Commands.run("ip", "link", "set", inside, "netns", ns);
    Commands.run("ip", "addr", "add", "10.200." + subnet + ".1/24", "dev", host);
    Commands.run("ip", "link", "set", host, "up");
    Commands.run("ip", "-n", ns, "link", "set", "lo", "up");
    Commands.run("ip", "-n", ns, "addr", "add", "10.200." + subnet + ".2/24", "dev", inside);
    Commands.run("ip", "-n", ns, "link", "set", inside, "up");
    Commands.run("ip", "-n", ns, "link", "add", "wmd0", "type", "veth", "peer", "name", "wmd1");
    Commands.run("ip", "-n", ns, "addr", "add", "10.201." + subnet + ".2/24", "dev", "wmd0");
    Commands.run("ip", "-n", ns, "link", "set", "wmd0", "up");
    Commands.run("ip", "-n", ns, "link", "set", "wmd1", "up");
    Commands.run(
        "ip", "-n", ns, "route", "add", "default", "via", "10.201." + subnet + ".1", "dev", "wmd0");
    return new NetworkNamespace(ns, subnet);
  }

  /**
   * A 10.200.N.0/24, 10.201.N.0/24 and 10.202.N.0/24 (a {@link Rack}'s) this host routes nowhere
   * yet.
   */
  private static int freeSubnet() {
    String routes = Commands.run("ip", "-4", "route", "show", "table", "all");
    List<Integer> free = new ArrayList<>();
    for (int n = 1; n < 255; n++) {
      if (!routes.contains("10.200." + n + ".")
          && !routes.contains("10.201." + n + ".")
          && !routes.contains("10.202." + n + ".")) {
        free.add(n);
      }
    }
    if (free.isEmpty()) {
      throw new IllegalStateException("no free 10.200.N.0/24 subnet on this host");
    }
    return free.get(ThreadLocalRandom.current().nextInt(free.size()));
  }

  public String name() {
    return name;
  }

  /** This host's end of the link: reachable from inside the namespace. */
  public String hostAddress() {
    return "10.200." + subnet + ".1";
  }

  /** The namespace's end of the link: reachable from this host. */
  public String address() {
    return "10.200." + subnet + ".2";
  }

  /**
   * The first three octets of the subnet a {@link Rack} of virtual servers in the namespace gets.
   */
  String rackPrefix() {
    return "10.202." + subnet;
  }

  /** The address on the namespace's default route: what kubelets there take as their node IP. */
  public String nodeAddress() {
    return "10.201." + subnet + ".2";
  }

  /**
   * {@code command}, run inside the namespace. nsenter rather than {@code ip netns exec}: that one
   * remounts /sys and hides the cgroup hierarchies the kubelet and runc need.
   */
  public List<String> enter(List<String> command) {
    List<String> wrapped =
        new ArrayList<>(List.of("nsenter", "--net=/var/run/netns/" + name, "--"));
    wrapped.addAll(command);
    return wrapped;
  }
}
