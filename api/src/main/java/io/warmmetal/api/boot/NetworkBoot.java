package io.warmmetal.api.boot;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.warmmetal.api.enrollment.AgentEndpoint;
import io.warmmetal.api.enrollment.EnrollmentTokens;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import java.nio.file.Path;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Booting servers into the agent image from the API: an iPXE script per boot (kernel, initrd, and a command line
 * with the agents' URL, the CA pin and a fresh single-use enrollment token), and the image's files.
 */
public final class NetworkBoot {
  public static final String KERNEL = "vmlinuz";
  public static final String INITRD = "initrd.img";
  private static final int TOKEN_SECONDS = 3600;
  private static final Pattern LABEL_KEY =
      Pattern.compile("([a-z0-9.-]+/)?[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?");
  private static final Pattern LABEL_VALUE = Pattern.compile("([A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?)?");

  private final Vertx vertx;
  private final EnrollmentTokens tokens;
  private final Path files;
  private final String extraCmdline;
  private final Supplier<AgentEndpoint> endpoint;

  public NetworkBoot(Vertx vertx, EnrollmentTokens tokens, Path files, String extraCmdline,
      Supplier<AgentEndpoint> endpoint) {
    this.vertx = vertx;
    this.tokens = tokens;
    this.files = files;
    this.extraCmdline = extraCmdline;
    this.endpoint = endpoint;
  }

  public void mount(Operations ops) {
    ops.handle("getIpxeScript", this::script);
    ops.handle("getBootFile", this::file);
  }

  private Future<Void> script(RoutingContext ctx) {
    JsonObject labels = labels(Params.of(ctx).query("labels"));
    // The files come from where the script came from: the address the booting server already reached.
    String base = ctx.request().scheme() + "://" + ctx.request().authority() + "/v1/boot/files/";
    AgentEndpoint api = endpoint.get();
    return tokens.createForBoot(TOKEN_SECONDS, labels).map(token -> {
      String cmdline = String.join(" ", "initrd=" + INITRD, extraCmdline, "warmmetal.api=" + api.url(),
          "warmmetal.ca_pin=" + api.caPin(), "warmmetal.token=" + token.getString("token")).replace("  ", " ");
      ctx.response().putHeader("Content-Type", "text/plain; charset=utf-8")
          .putHeader("Cache-Control", "no-store") // it holds a secret
          .end("#!ipxe\n"
              + "# WarmMetal agent image; enrollment token " + token.getString("id") + " (single use, 1 h)\n"
              + "kernel " + base + KERNEL + " " + cmdline + "\n"
              + "initrd " + base + INITRD + "\n"
              + "boot\n");
      return null;
    });
  }

  private Future<Void> file(RoutingContext ctx) {
    String name = Params.of(ctx).path("file"); // the contract's pattern admits no path separators
    String path = files.resolve(name).toString();
    return vertx.fileSystem().exists(path).compose(exists -> {
      if (!exists) {
        throw ApiError.of(ErrorCode.NotFound, "no boot file " + name + " (build the image into " + files
            + ": images/boot/build.sh)");
      }
      return ctx.response().putHeader("Content-Type", "application/octet-stream").sendFile(path);
    });
  }

  private static JsonObject labels(String spec) {
    JsonObject labels = new JsonObject();
    if (spec == null) {
      return labels;
    }
    for (String pair : spec.split(",")) {
      String[] kv = pair.split("=", 2);
      if (!LABEL_KEY.matcher(kv[0]).matches() || !LABEL_VALUE.matcher(kv[1]).matches()) {
        throw ApiError.invalid("labels", "'" + pair + "' is not a label (key=value, Kubernetes syntax)");
      }
      labels.put(kv[0], kv[1]);
    }
    return labels;
  }
}
