package io.warmmetal.cli.boot;

import io.warmmetal.cli.session.SessionCommand;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code warmmetal boot}: the URL DHCP/iPXE chains to, {@code <api>/v1/boot/ipxe} with a boot token
 * as Basic credentials (iPXE can put credentials only in a URL) and the server's MAC and SMBIOS
 * UUID, which iPXE fills in (the API boots the image its machine's pool names). A token is printed
 * only when this command just minted it — then with the labels bound to it; otherwise the URL
 * carries a placeholder to fill in, and the labels (which must be among that token's) in the URL.
 * {@code --https-port} prints the URL of the boot endpoints' HTTPS port, for an iPXE built to trust
 * the API's CA.
 */
@Command(
    name = "boot",
    description = "Print the iPXE chain URL (and, with --dnsmasq, the dnsmasq lines).")
public final class BootCommand extends SessionCommand {
  static final String PLACEHOLDER = "<boot token>";

  @Option(
      names = "--label",
      paramLabel = "KEY=VALUE",
      description =
          "a label for machines booting this way "
              + "(repeatable): bound to the token --create-token mints, else put in the URL (it must be one of the token's)")
  Map<String, String> labels;

  @Option(
      names = "--create-token",
      paramLabel = "NAME",
      description =
          "mint a boot-role token with this name (admin) and put it in the URL; shown only now")
  String createToken;

  @Option(
      names = "--https-port",
      paramLabel = "PORT",
      description =
          "an https:// URL to this port (the API's WARMMETAL_BOOT_HTTPS_PORT), for an iPXE built with "
              + "HTTPS and TRUST=<the API's CA certificate>")
  Integer httpsPort;

  @Option(
      names = "--dnsmasq",
      description = "print dnsmasq's dhcp-match/dhcp-boot lines rather than the URL alone")
  boolean dnsmasq;

  @Override
  public Integer call() {
    String secret = PLACEHOLDER;
    Map<String, String> inUrl = labels;
    if (createToken != null) {
      Map<String, Object> body = new TreeMap<>(Map.of("name", createToken, "role", "boot"));
      if (labels != null) {
        body.put("machineLabels", labels);
      }
      secret = api().post("/v1/tokens", body).path("token").asText();
      inUrl = null; // bound to the token: the URL needs none
    }
    URI base = api().base();
    if (httpsPort != null) {
      base =
          URI.create(
              "https://"
                  + base.getHost()
                  + ":"
                  + httpsPort
                  + (base.getRawPath() == null ? "" : base.getRawPath()));
    }
    String url = url(base, secret, inUrl);
    var out = session().out();
    if (dnsmasq) {
      out.println("dhcp-match=set:ipxe,175");
      out.println("dhcp-boot=tag:!ipxe,undionly.kpxe");
      out.println(
          "dhcp-option=tag:ipxe,encap:175,176,1"); // iPXE takes the lease at once (no ProxyDHCP
      // wait)
      // iPXE waits ~12 s for an IPv6 router; answer it where the rack has none (the interface needs
      // an IPv6 address)
      out.println("# enable-ra");
      out.println("# dhcp-range=::,constructor:<the rack's interface>,ra-only");
      out.println("dhcp-boot=tag:ipxe," + url);
    } else {
      out.println(url);
    }
    out.flush();
    var err = session().err();
    if (createToken == null) {
      err.println(
          "Replace "
              + PLACEHOLDER
              + " with a boot-role token (`warmmetal tokens create NAME --role boot"
              + " --machine-label KEY=VALUE`), or pass --create-token NAME to mint one.");
    }
    if (httpsPort != null) {
      err.println(
          "HTTPS needs an iPXE built with DOWNLOAD_PROTO_HTTPS and TRUST=<the API's CA certificate>"
              + " (Debian's iPXE has no HTTPS): docs/node-image.md, \"Booting over HTTPS\".");
    }
    err.println(
        "New servers wait as `new` until accepted (`warmmetal machines accept ID`) unless registered first"
            + " (`warmmetal hardware add MAC`).");
    return 0;
  }

  /**
   * {@code http://boot:SECRET@host:port/v1/boot/ipxe?mac=${netX/mac}&uuid=${uuid}&labels=k%3Dv,…}:
   * labels sorted, so the line is stable.
   */
  static String url(URI api, String secret, Map<String, String> labels) {
    StringBuilder b =
        new StringBuilder(api.getScheme())
            .append("://boot:")
            .append(secret)
            .append('@')
            .append(api.getRawAuthority().replaceFirst("^.*@", ""))
            .append(api.getRawPath() == null ? "" : api.getRawPath().replaceAll("/$", ""))
            .append("/v1/boot/ipxe?mac=${netX/mac}&uuid=${uuid}");
    if (labels != null && !labels.isEmpty()) {
      StringJoiner j = new StringJoiner(",");
      new TreeMap<>(labels).forEach((k, v) -> j.add(enc(k) + "%3D" + enc(v)));
      b.append("&labels=").append(j);
    }
    return b.toString();
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
