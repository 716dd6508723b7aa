package io.warmmetal.api.boot;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.auth.AuthHandler;
import io.warmmetal.api.auth.Principal;
import io.warmmetal.api.auth.Role;
import io.warmmetal.api.boot.BootImages.Catalog;
import io.warmmetal.api.boot.BootImages.Image;
import io.warmmetal.api.enrollment.AgentEndpoint;
import io.warmmetal.api.enrollment.EnrollmentTokens;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import java.util.Locale;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Booting servers into the node image from the API. {@code GET /v1/boot/ipxe} answers an iPXE
 * script per boot: the image the booting server's pool names (found by the MAC and system UUID iPXE
 * puts in the URL), else the default one; its kernel and initrd; a kernel command line with where
 * the layers are and each one's sha256 (the initramfs refuses a layer that differs), the agents'
 * URL, the CA pin and a fresh single-use enrollment token. The images' files are served to anyone:
 * there are no secrets in them.
 *
 * <p>A boot token sits in DHCP configuration and travels in clear, so what it can do is bounded
 * here: the labels of what it boots are the ones bound to it when it was minted (the URL may narrow
 * them, never add one), it mints at a bounded rate ({@link MintRate}), at most one of its
 * enrollment tokens is outstanding per MAC and per system UUID, and what they enroll new waits for
 * an operator's acceptance (the core's rule). Served on the boot HTTPS port, the script's kernel
 * and initrd come over HTTPS too; the layers stay on plain HTTP (the initramfs has no TLS; their
 * digests came in the script).
 */
public final class NetworkBoot {
  private static final int TOKEN_SECONDS = 3600;
  private static final Pattern LABEL_KEY =
      Pattern.compile("([a-z0-9.-]+/)?[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?");
  private static final Pattern LABEL_VALUE =
      Pattern.compile("([A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?)?");
  private static final Logger LOG = LoggerFactory.getLogger(NetworkBoot.class);

  private final Pool db;
  private final EnrollmentTokens tokens;
  private final BootImages images;
  private final String extraCmdline;
  private final Supplier<AgentEndpoint> endpoint;
  private final MintRate mintRate;
  private final IntSupplier plainPort;

  /**
   * @param mintBurst enrollment tokens a boot token may mint at once
   * @param mintsPerMinute and how fast after that
   * @param plainPort the API's plain HTTP port: where a script served over HTTPS sends the
   *     initramfs for layers
   */
  public NetworkBoot(
      Pool db,
      EnrollmentTokens tokens,
      BootImages images,
      String extraCmdline,
      Supplier<AgentEndpoint> endpoint,
      int mintBurst,
      int mintsPerMinute,
      IntSupplier plainPort) {
    this.db = db;
    this.tokens = tokens;
    this.images = images;
    this.extraCmdline = extraCmdline;
    this.endpoint = endpoint;
    this.mintRate = new MintRate(db, mintBurst, mintsPerMinute);
    this.plainPort = plainPort;
  }

  public void mount(Operations ops) {
    ops.handle("getIpxeScript", this::script);
    ops.handle("getBootFile", this::defaultImageFile);
    ops.handle("getBootImageFile", this::imageFile);
    ops.json("listBootImages", 200, ctx -> images.catalog().map(NetworkBoot::json));
  }

  private Future<Void> script(RoutingContext ctx) {
    Params p = Params.of(ctx);
    Principal caller = AuthHandler.principal(ctx);
    String mac = mac(p.query("mac"));
    String uuid = p.query("uuid") == null ? null : p.query("uuid").toLowerCase(Locale.ROOT);
    JsonObject labels;
    try {
      labels = allowed(caller, labels(p.query("labels")));
    } catch (ApiError refused) {
      return recordRefusal(mac, uuid, refused).transform(x -> Future.failedFuture(refused));
    }
    // The files come from where the script came from: the address the booting server already
    // reached. Over HTTPS,
    // the layers still come over HTTP (the initramfs has no TLS), from the API's port on the same
    // host.
    String host = ctx.request().authority().host();
    String scriptBase =
        ctx.request().scheme() + "://" + ctx.request().authority() + "/v1/boot/images/";
    String hostInUrl =
        host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host; // IPv6
    String layerBase =
        ctx.request().isSSL()
            ? "http://" + hostInUrl + ":" + plainPort.getAsInt() + "/v1/boot/images/"
            : scriptBase;
    return images
        .catalog()
        .compose(catalog -> wantedBy(mac, uuid).map(wanted -> choose(catalog, wanted)))
        .compose(
            image ->
                mintRate
                    .take(caller.tokenId())
                    .recover(
                        err ->
                            err instanceof ApiError refused
                                ? recordRefusal(mac, uuid, refused)
                                    .transform(x -> Future.failedFuture(err))
                                : Future.failedFuture(err))
                    .compose(
                        x ->
                            tokens.createForBoot(
                                TOKEN_SECONDS, labels, caller.tokenId(), mac, uuid))
                    .map(
                        token -> {
                          AgentEndpoint api = endpoint.get();
                          String files = scriptBase + image.version() + "/";
                          JsonObject m = image.manifest();
                          String layers =
                              image.layers().stream()
                                  .map(l -> l.getString("name") + "@" + l.getString("sha256"))
                                  .collect(Collectors.joining(","));
                          String cmdline =
                              String.join(
                                      " ",
                                      "initrd=" + m.getJsonObject("initrd").getString("name"),
                                      "boot=warmmetal",
                                      "warmmetal.files=" + layerBase + image.version() + "/",
                                      "warmmetal.layers=" + layers,
                                      "warmmetal.image=" + image.version(),
                                      "BOOTIF=01-${netX/mac:hexhyp}",
                                      m.getString("cmdline", ""),
                                      extraCmdline,
                                      "warmmetal.api=" + api.url(),
                                      "warmmetal.ca_pin=" + api.caPin(),
                                      "warmmetal.token=" + token.getString("token"))
                                  .replaceAll(" +", " ");
                          ctx.response()
                              .putHeader("Content-Type", "text/plain; charset=utf-8")
                              .putHeader("Cache-Control", "no-store") // it holds a secret
                              .end(
                                  "#!ipxe\n"
                                      + "# WarmMetal node image "
                                      + image.version()
                                      + " (Kubernetes "
                                      + image.kubernetesVersion()
                                      + "); enrollment token "
                                      + token.getString("id")
                                      + " (single use, 1 h)\n"
                                      + "kernel "
                                      + files
                                      + m.getJsonObject("kernel").getString("name")
                                      + " "
                                      + cmdline
                                      + "\n"
                                      + "initrd "
                                      + files
                                      + m.getJsonObject("initrd").getString("name")
                                      + "\n"
                                      + "boot\n");
                          return null;
                        }));
  }

  /**
   * The labels a boot gives its machine. A boot token's are bound to it: without labels in the URL,
   * all of them; the URL may narrow them to some of its pairs, never add one (403 naming the first
   * it does not allow). An admin's token (it could mint any enrollment token anyway) takes the
   * URL's.
   */
  static JsonObject allowed(Principal caller, JsonObject asked) {
    if (caller.role() != Role.BOOT) {
      return asked;
    }
    JsonObject bound = caller.machineLabels() == null ? new JsonObject() : caller.machineLabels();
    for (String key : asked.fieldNames()) {
      if (!asked.getString(key).equals(bound.getString(key))) {
        throw new ApiError(
            ErrorCode.Forbidden,
            "label "
                + key
                + "="
                + asked.getString(key)
                + " is not one this"
                + " boot token allows ("
                + (bound.isEmpty()
                    ? "it was minted with no machineLabels"
                    : "it allows " + pairs(bound))
                + "); a boot URL may narrow the token's labels, never add one",
            "labels",
            null);
      }
    }
    return asked.isEmpty() ? bound.copy() : asked;
  }

  private static String pairs(JsonObject labels) {
    return labels.fieldNames().stream()
        .sorted()
        .map(k -> k + "=" + labels.getString(k))
        .collect(Collectors.joining(","));
  }

  /**
   * Says on the machine this hardware already is, if any, that its boot was refused and why — at
   * most once a minute per machine; nothing for hardware the fleet does not know (the caller
   * answers for any identity it likes).
   */
  private Future<Void> recordRefusal(String mac, String uuid, ApiError refused) {
    return db.preparedQuery(
            """
            INSERT INTO events (type, subject, machine_id, reason)
            SELECT 'BootRefused', m.id, m.id, $3
            FROM machines m
            WHERE (lower(m.system_uuid) = $1 OR m.primary_mac = $2) AND m.state <> 'retired'
              AND NOT EXISTS (SELECT 1 FROM events e WHERE e.machine_id = m.id AND e.type = 'BootRefused'
                                AND e.at > now() - interval '1 minute')
            LIMIT 1""")
        .execute(
            Tuple.of(
                uuid,
                mac,
                "network boot refused (" + refused.code().status() + "): " + refused.getMessage()))
        .<Void>mapEmpty()
        .recover(
            err ->
                Future.succeededFuture()); // the refusal is the answer; recording it is a courtesy
  }

  /** The image the pool of the machine this hardware is names, if any (null: the default). */
  private Future<String> wantedBy(String mac, String uuid) {
    if (mac == null && uuid == null) {
      return Future.succeededFuture(null);
    }
    return db.preparedQuery(
            """
            SELECT p.image FROM machines m JOIN pools p ON p.shape = m.shape
            WHERE (lower(m.system_uuid) = $1 OR m.primary_mac = $2) AND m.state <> 'retired'
            ORDER BY m.system_uuid IS NOT DISTINCT FROM $1 DESC LIMIT 1""")
        .execute(Tuple.of(uuid, mac))
        .map(rows -> rows.size() == 0 ? null : rows.iterator().next().getString("image"));
  }

  private Image choose(Catalog catalog, String wanted) {
    if (wanted != null) {
      var image = catalog.get(wanted);
      if (image.isPresent()) {
        return image.get();
      }
      LOG.warn(
          "A pool names node image {}, which {} does not hold; booting the default",
          wanted,
          images.dir());
    }
    return catalog
        .defaultImage()
        .orElseThrow(
            () ->
                ApiError.of(
                    ErrorCode.NotFound,
                    catalog.images().isEmpty()
                        ? "no node image in "
                            + images.dir()
                            + " (build one: images/node/build.sh --install "
                            + images.dir()
                            + ")"
                        : "no default node image among "
                            + catalog.images().stream().map(Image::version).toList()
                            + " in "
                            + images.dir()
                            + " (set WARMMETAL_BOOT_IMAGE, or link default to one)"));
  }

  private Future<Void> imageFile(RoutingContext ctx) {
    Params p = Params.of(ctx);
    String version = p.path("version");
    return images
        .catalog()
        .compose(
            catalog ->
                send(
                    ctx,
                    catalog
                        .get(version)
                        .orElseThrow(
                            () ->
                                ApiError.of(
                                    ErrorCode.NotFound,
                                    "no node image " + version + " in " + images.dir())),
                    p.path("file")));
  }

  /** {@code /v1/boot/files/{file}}: the default image's files. */
  private Future<Void> defaultImageFile(RoutingContext ctx) {
    return images
        .catalog()
        .compose(catalog -> send(ctx, choose(catalog, null), Params.of(ctx).path("file")));
  }

  private static Future<Void> send(RoutingContext ctx, Image image, String file) {
    // Only the files the manifest names (the contract's pattern already admits no path separators).
    if (!image.has(file)) {
      throw ApiError.of(
          ErrorCode.NotFound, "node image " + image.version() + " has no file " + file);
    }
    String type =
        file.endsWith(".json")
            ? "application/json"
            : file.endsWith(".txt") ? "text/plain" : "application/octet-stream";
    return ctx.response()
        .putHeader("Content-Type", type)
        .sendFile(image.dir().resolve(file).toString());
  }

  static JsonObject json(Catalog catalog) {
    JsonArray items = new JsonArray();
    for (Image image : catalog.images()) {
      JsonObject m = image.manifest();
      long bytes =
          m.getJsonObject("kernel").getLong("size", 0L)
              + m.getJsonObject("initrd").getLong("size", 0L)
              + image.layers().stream().mapToLong(l -> l.getLong("size", 0L)).sum();
      items.add(
          new JsonObject()
              .put("version", image.version())
              .put("default", image.version().equals(catalog.defaultVersion()))
              .put("kubernetesVersion", image.kubernetesVersion())
              .put("kernelVersion", m.getString("kernelVersion"))
              .put("os", m.getString("os"))
              .put("digest", m.getString("digest"))
              .put("bootBytes", bytes)
              .put("kernel", m.getJsonObject("kernel"))
              .put("initrd", m.getJsonObject("initrd"))
              .put("layers", new JsonArray(image.layers())));
    }
    return new JsonObject().put("items", items);
  }

  /**
   * {@code aa:bb:…} or {@code aa-bb-…} (as iPXE's {@code hexhyp} writes it), any case; null if
   * absent.
   */
  private static String mac(String given) {
    return given == null ? null : given.toLowerCase(Locale.ROOT).replace('-', ':');
  }

  private static JsonObject labels(String spec) {
    JsonObject labels = new JsonObject();
    if (spec == null) {
      return labels;
    }
    for (String pair : spec.split(",")) {
      String[] kv = pair.split("=", 2);
      if (!LABEL_KEY.matcher(kv[0]).matches() || !LABEL_VALUE.matcher(kv[1]).matches()) {
        throw ApiError.invalid(
            "labels", "'" + pair + "' is not a label (key=value, Kubernetes syntax)");
      }
      labels.put(kv[0], kv[1]);
    }
    return labels;
  }
}
