package io.warmmetal.e2e.cluster;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.RequiredTool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * A rack for virtual servers, as an operator wires one: a LAN (a bridge in the control plane's
 * network namespace, {@code 10.202.N.0/24}, no route out) with a DHCP server — Debian's dnsmasq,
 * configured as the docs tell an operator to — that hands iPXE the API's boot URL, so a server
 * powered on here network-boots from the API (and answers iPXE's IPv6 router solicitation, which it
 * would otherwise wait for). The namespace routes the LAN to this host's end of its link, where the
 * API listens for agents; its HTTP port (on loopback) is relayed there by socat. {@link
 * VirtualServer}s plug into it.
 */
public final class Rack implements AutoCloseable {
  static final String BRIDGE = "wmrack0";

  /**
   * A rack booting from {@code fx}'s API with a boot token minted for it, as an operator sets one
   * up — and, as an operator racking servers does, each server's MAC and system UUID registered as
   * a hardware record before it is powered on, so it is admitted when it enrolls (new hardware
   * nobody registered would wait for acceptance).
   */
  public static Rack forApi(ControlPlane cluster, ApiFixture fx) throws Exception {
    String bootToken =
        fx.client
            .post(
                "/v1/tokens",
                ApiFixture.ADMIN,
                new JsonObject().put("name", "rack").put("role", "boot"))
            .body()
            .getString("token");
    Rack rack = create(cluster, fx.api.port(), bootUrl(bootToken, fx.api.port()));
    rack.inventory =
        (mac, uuid) -> {
          var record =
              fx.client.put(
                  "/v1/hardware/" + mac,
                  ApiFixture.ADMIN,
                  new JsonObject().put("systemUuid", uuid));
          if (record.status() != 200) {
            throw new IllegalStateException("registering " + mac + " failed: " + record.raw());
          }
        };
    return rack;
  }

  /** Stands for the host's end of the namespace's link in a boot URL. */
  public static final String API_HOST = "{api-host}";

  private final ControlPlane cluster;
  private final Path dir;
  private final String prefix;
  private final List<Daemon> daemons = new ArrayList<>();
  private int taps;

  /**
   * Registers a server's MAC and system UUID with the API before it boots; none for a rack of
   * another API.
   */
  private BiConsumer<String, String> inventory = (mac, uuid) -> {};

  private Rack(ControlPlane cluster, Path dir) {
    this.cluster = cluster;
    this.dir = dir;
    this.prefix = cluster.network().rackPrefix();
  }

  /**
   * Sets up the LAN and its DHCP server, which boots iPXE clients from {@code bootUrl} — iPXE fills
   * in {@code ${netX/mac}} and {@code ${uuid}} — after relaying {@code apiHttpPort} (on 127.0.0.1)
   * to the host's end of the link, port for port. {@code bootUrl} may name {@link #API_HOST} for
   * that address.
   */
  public static Rack create(ControlPlane cluster, int apiHttpPort, String bootUrl)
      throws Exception {
    RequiredTool.onPath("dnsmasq", "dnsmasq-base"); // the rack's DHCP server
    RequiredTool.onPath("socat", "socat"); // the API's port relayed onto the link
    Rack rack = new Rack(cluster, Files.createDirectories(cluster.sandbox().dir.resolve("rack")));
    try {
      rack.setUp(apiHttpPort, bootUrl.replace(API_HOST, cluster.network().hostAddress()));
      return rack;
    } catch (Throwable t) {
      rack.close();
      throw t;
    }
  }

  private void setUp(int apiHttpPort, String bootUrl) throws Exception {
    NetworkNamespace net = cluster.network();
    List<String> ns = List.of("ip", "-n", net.name());
    Commands.run(concat(ns, "link", "add", BRIDGE, "type", "bridge"));
    Commands.run(concat(ns, "addr", "add", gateway() + "/24", "dev", BRIDGE));
    // An IPv6 prefix on the LAN only so that dnsmasq can answer router solicitations (below).
    Commands.run(
        concat(
            ns,
            "addr",
            "add",
            "fd00:" + prefix.replace("10.", "").replace('.', ':') + "::1/64",
            "dev",
            BRIDGE));
    Commands.run(concat(ns, "link", "set", BRIDGE, "up"));
    // The namespace forwards between the LAN and the link; this host routes the LAN back through
    // it.
    Commands.run(net.enter(List.of("sysctl", "-qw", "net.ipv4.ip_forward=1")));
    Commands.run(
        "ip",
        "route",
        "add",
        prefix + ".0/24",
        "via",
        net.address(),
        "dev",
        cluster.sandbox().hostLink());
    daemons.add(
        Daemon.start(
            "api-relay",
            List.of(
                "socat",
                "TCP-LISTEN:" + apiHttpPort + ",bind=" + net.hostAddress() + ",fork,reuseaddr",
                "TCP:127.0.0.1:" + apiHttpPort),
            dir.resolve("relay.log"),
            Map.of()));
    // dnsmasq as a rack's DHCP server: leases on the LAN; PXE ROMs that are not iPXE would get
    // undionly.kpxe over
    // TFTP (dnsmasq's option 175 test tells iPXE apart), iPXE gets the boot URL. No DNS (port 0).
    Path conf = dir.resolve("dnsmasq.conf");
    Files.writeString(
        conf,
        String.join(
            "\n",
            "port=0",
            "interface=" + BRIDGE,
            "bind-interfaces",
            "dhcp-authoritative",
            "dhcp-range=" + prefix + ".100," + prefix + ".199,255.255.255.0,12h",
            "dhcp-option=option:router," + gateway(),
            "dhcp-leasefile=" + dir.resolve("leases"),
            "dhcp-match=set:ipxe,175",
            "dhcp-boot=tag:!ipxe,undionly.kpxe",
            "dhcp-boot=tag:ipxe," + bootUrl,
            // iPXE's no-pxedhcp: take the lease at once instead of waiting seconds for a ProxyDHCP
            // offer.
            "dhcp-option=tag:ipxe,encap:175,176,1",
            // iPXE also waits ~12 s for an IPv6 router before it boots: a router advertisement (no
            // addresses, no
            // route out) ends that wait.
            "enable-ra",
            "dhcp-range=::,constructor:" + BRIDGE + ",ra-only",
            ""));
    daemons.add(
        Daemon.start(
            "dnsmasq",
            net.enter(
                List.of(
                    "dnsmasq",
                    "--keep-in-foreground",
                    "--log-dhcp",
                    "--log-facility=-",
                    "--conf-file=" + conf,
                    "--pid-file=" + dir.resolve("dnsmasq.pid"))),
            dir.resolve("dnsmasq.log"),
            Map.of()));
    Thread.sleep(200);
    daemons.forEach(Daemon::checkAlive);
  }

  /**
   * The API settings that let servers on a rack reach it: the agents' port on this host's end of
   * the link (its certificate names that address first, so the boot script sends agents there), the
   * images from {@code bootDir}, a serial console on the kernel command line, heartbeats and pool
   * passes quick enough for a test.
   */
  public static Map<String, String> apiSettings(ControlPlane cluster, Path bootDir) {
    String address = cluster.network().hostAddress();
    return Map.of(
        "WARMMETAL_AGENT_HOST",
        address,
        "WARMMETAL_AGENT_NAMES",
        address + ",localhost,127.0.0.1",
        "WARMMETAL_HEARTBEAT_SECONDS",
        "2",
        "WARMMETAL_POOL_INTERVAL_MS",
        "1000",
        "WARMMETAL_BOOT_DIR",
        bootDir.toString(),
        "WARMMETAL_BOOT_CMDLINE",
        "console=ttyS0,115200");
  }

  /**
   * The boot URL an operator gives DHCP for iPXE: a boot token as Basic credentials; iPXE fills in
   * the identity.
   */
  public static String bootUrl(String bootToken, int apiHttpPort) {
    return "http://boot:"
        + bootToken
        + "@"
        + API_HOST
        + ":"
        + apiHttpPort
        + "/v1/boot/ipxe?mac=${netX/mac}&uuid=${uuid}";
  }

  /** The LAN's router (the namespace) and DHCP server. */
  public String gateway() {
    return prefix + ".1";
  }

  /** The operator registers a server about to be powered on here (its MAC and system UUID). */
  void expect(String mac, String uuid) {
    inventory.accept(mac, uuid);
  }

  /**
   * A tap device on the LAN for a server's NIC; QEMU opens it by name from inside the namespace.
   */
  String plugIn() {
    String tap = "wmtap" + taps++;
    List<String> ns = List.of("ip", "-n", cluster.network().name());
    Commands.run(concat(ns, "tuntap", "add", "dev", tap, "mode", "tap"));
    Commands.run(concat(ns, "link", "set", tap, "master", BRIDGE));
    Commands.run(concat(ns, "link", "set", tap, "up"));
    return tap;
  }

  void unplug(String tap) {
    Commands.attempt("ip", "-n", cluster.network().name(), "link", "del", tap);
  }

  /** DHCP's log, for a failure's message. */
  public String dhcpLog(int lines) {
    return daemons.size() > 1 ? daemons.get(1).tail(lines) : "";
  }

  ControlPlane cluster() {
    return cluster;
  }

  Path dir() {
    return dir;
  }

  private static List<String> concat(List<String> head, String... tail) {
    List<String> all = new ArrayList<>(head);
    all.addAll(List.of(tail));
    return all;
  }

  @Override
  public void close() {
    for (int i = daemons.size() - 1; i >= 0; i--) {
      daemons.get(i).close();
    }
    Commands.attempt("ip", "route", "del", prefix + ".0/24");
    Commands.attempt("ip", "-n", cluster.network().name(), "link", "del", BRIDGE);
  }
}
