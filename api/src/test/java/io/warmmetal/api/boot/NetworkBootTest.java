package io.warmmetal.api.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.enrollment.AgentIdentity;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.BootImageFixture;
import io.warmmetal.fleet.SimulatedAgent;
import io.warmmetal.protocol.testing.Await;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Network boot from the API: the iPXE script, fetched the way iPXE fetches it (credentials in the
 * URL, so Basic authentication), boots the image the machine's pool names (else the default) with
 * its layers' digests and a working single-use enrollment token; the images' files are served to
 * anyone, and only the files they name.
 */
@ExtendWith(VertxExtension.class)
class NetworkBootTest {
  private static final String V1 = "v1.20.2-aaaaaaaaaaaa";
  private static final String V2 = "v1.20.2-bbbbbbbbbbbb";

  record Answer(int status, String contentType, Buffer body, String retryAfter) {}

  static Answer get(HttpClient http, int port, String path, String authorization) {
    return request(http, "127.0.0.1", port, path, authorization).await();
  }

  /**
   * A GET, answered within 2 minutes: an answer that never comes fails the test instead of hanging
   * the build. (30 s was not enough twice on a loaded 2-core machine, where a first request checks
   * and hashes an image's files.)
   */
  static Future<Answer> request(
      HttpClient http, String host, int port, String path, String authorization) {
    RequestOptions options =
        new RequestOptions().setMethod(HttpMethod.GET).setHost(host).setPort(port).setURI(path);
    if (authorization != null) {
      options.putHeader("Authorization", authorization);
    }
    return http.request(options)
        .compose(req -> req.send())
        .compose(
            resp ->
                resp.body()
                    .map(
                        b ->
                            new Answer(
                                resp.statusCode(),
                                resp.getHeader("Content-Type"),
                                b,
                                resp.getHeader("Retry-After"))))
        .timeout(2, TimeUnit.MINUTES)
        .onFailure(err -> threadsIfStuck(err, path));
  }

  /**
   * An answer that never came (twice under CI's load, each time the first boot request of a fresh
   * API, while the same tests pass in seconds alone): every thread's stack, to say where it waits.
   */
  private static void threadsIfStuck(Throwable err, String path) {
    if (!(err instanceof TimeoutException)
        && (err.getMessage() == null || !err.getMessage().startsWith("Timeout"))) {
      return;
    }
    StringBuilder dump =
        new StringBuilder("No answer to GET " + path + "; the test JVM's threads:\n");
    Thread.getAllStackTraces()
        .forEach(
            (thread, stack) -> {
              dump.append('"')
                  .append(thread.getName())
                  .append("\" ")
                  .append(thread.getState())
                  .append('\n');
              for (StackTraceElement frame : stack) {
                dump.append("    at ").append(frame).append('\n');
              }
            });
    System.err.print(dump);
  }

  static String basic(String token) {
    return "Basic "
        + Base64.getEncoder().encodeToString(("boot:" + token).getBytes(StandardCharsets.UTF_8));
  }

  /** kernel parameters of the script's kernel line, by name. */
  private static Map<String, String> cmdline(String script) {
    Map<String, String> params = new HashMap<>();
    String kernel = script.lines().filter(l -> l.startsWith("kernel ")).findFirst().orElseThrow();
    for (String word : kernel.split(" ")) {
      int eq = word.indexOf('=');
      if (eq > 0) {
        params.put(word.substring(0, eq), word.substring(eq + 1));
      }
    }
    return params;
  }

  @Test
  void theIpxeScriptBootsThePoolsImageWithItsDigestsAndAFreshSingleUseEnrollmentToken(Vertx vertx)
      throws Exception {
    Path bootDir = Files.createTempDirectory("boot");
    Map<String, byte[]> v1 = BootImageFixture.install(bootDir, V1, 7);
    BootImageFixture.install(bootDir, V2, 8);
    Files.createSymbolicLink(bootDir.resolve("default"), Path.of(V1));
    try (ApiFixture fx =
        ApiFixture.start(
            vertx,
            Map.of(
                "WARMMETAL_BOOT_DIR",
                bootDir.toString(),
                "WARMMETAL_BOOT_CMDLINE",
                "console=ttyS0"))) {
      HttpClient http = vertx.createHttpClient();
      String bootToken =
          fx.client
              .post(
                  "/v1/tokens",
                  ApiFixture.ADMIN,
                  new JsonObject()
                      .put("name", "pxe")
                      .put("role", "boot")
                      .put("machineLabels", new JsonObject().put("rack", "r9").put("boot", "pxe")))
              .body()
              .getString("token");
      // The operator expects this server: it is admitted when it enrolls.
      String mac = "52:54:00:0a:0b:0c";
      String uuid = UUID.randomUUID().toString();
      assertThat(
              fx.client
                  .put(
                      "/v1/hardware/" + mac,
                      ApiFixture.ADMIN,
                      new JsonObject().put("systemUuid", uuid))
                  .status())
          .isEqualTo(200);

      assertThat(get(http, fx.api.port(), "/v1/boot/ipxe", null).status()).isEqualTo(401);
      Answer answer =
          get(
              http,
              fx.api.port(),
              "/v1/boot/ipxe?labels=rack%3Dr9,boot%3Dpxe&mac=" + mac + "&uuid=" + uuid,
              basic(bootToken));
      assertThat(answer.status()).as(answer.body().toString()).isEqualTo(200);
      assertThat(answer.contentType()).startsWith("text/plain");
      String script = answer.body().toString();
      assertThat(script).startsWith("#!ipxe\n").contains("\nboot\n");
      String files = "http://127.0.0.1:" + fx.api.port() + "/v1/boot/images/" + V1 + "/";
      assertThat(script)
          .contains("kernel " + files + "vmlinuz ")
          .contains("\ninitrd " + files + "initrd.img\n");
      Map<String, String> params = cmdline(script);
      JsonObject manifest =
          new JsonObject(Files.readString(bootDir.resolve(V1).resolve("image.json")));
      String layers =
          manifest.getJsonArray("layers").stream()
              .map(l -> (JsonObject) l)
              .map(l -> l.getString("name") + "@" + l.getString("sha256"))
              .reduce((a, b) -> a + "," + b)
              .orElseThrow();
      assertThat(params)
          .containsEntry("console", "ttyS0")
          .containsEntry("initrd", "initrd.img")
          .containsEntry("boot", "warmmetal")
          .containsEntry("warmmetal.files", files)
          .containsEntry("warmmetal.layers", layers)
          .containsEntry("warmmetal.image", V1)
          .containsEntry("BOOTIF", "01-${netX/mac:hexhyp}")
          .containsEntry("systemd.unified_cgroup_hierarchy", "0")
          .containsEntry("warmmetal.ca_pin", fx.api.caPin().value())
          .containsEntry("warmmetal.api", "https://localhost:" + fx.api.agentPort());

      // The token works once: the booted agent enrolls with it (and gets the labels); nobody can
      // again.
      Enrollment enrollment =
          new Enrollment(
              vertx, URI.create("https://127.0.0.1:" + fx.api.agentPort()), fx.api.caPin());
      JsonObject host =
          new JsonObject()
              .put("name", "pxe-1")
              .put(
                  "facts",
                  ApiFixture.facts(16, 64)
                      .put(
                          "image",
                          new JsonObject().put("version", V1).put("kubernetesVersion", "v1.20.2")))
              .put("identity", new JsonObject().put("systemUuid", uuid).put("primaryMac", mac));
      AgentIdentity identity = enrollment.enroll(params.get("warmmetal.token"), host).await();
      JsonObject machine =
          fx.client.get("/v1/machines/" + identity.machineId(), ApiFixture.ADMIN).body();
      assertThat(machine.getJsonObject("labels").getMap())
          .containsEntry("rack", "r9")
          .containsEntry("boot", "pxe");
      assertThat(machine.getBoolean("admitted")).as("its hardware record admits it").isTrue();
      assertThat(machine.getJsonObject("facts").getJsonObject("image").getString("version"))
          .isEqualTo(V1);
      assertThatThrownBy(() -> enrollment.enroll(params.get("warmmetal.token"), host).await())
          .hasMessageContaining("used up");

      // A pool names the other image: its machine (found by the MAC or UUID iPXE sends) boots that
      // one; an
      // unknown server boots the default. A pool cannot name an image that is not installed.
      assertThat(
              fx.client
                  .put(
                      "/v1/pools/x86-16c-64g",
                      ApiFixture.ADMIN,
                      new JsonObject()
                          .put("minWarm", 0)
                          .put("maxWarm", 1)
                          .put("image", "v9.9.9-nope"))
                  .status())
          .isEqualTo(400);
      fx.client.put(
          "/v1/pools/x86-16c-64g",
          ApiFixture.ADMIN,
          new JsonObject().put("minWarm", 0).put("maxWarm", 1).put("image", V2));
      assertThat(
              cmdline(
                  get(http, fx.api.port(), "/v1/boot/ipxe?mac=52-54-00-0A-0B-0C", basic(bootToken))
                      .body()
                      .toString()))
          .containsEntry("warmmetal.image", V2);
      assertThat(
              cmdline(
                  get(
                          http,
                          fx.api.port(),
                          "/v1/boot/ipxe?mac=52:54:00:ff:ff:fe&uuid=" + uuid.toUpperCase(),
                          basic(bootToken))
                      .body()
                      .toString()))
          .containsEntry("warmmetal.image", V2);
      assertThat(
              cmdline(
                  get(http, fx.api.port(), "/v1/boot/ipxe?mac=52:54:00:ff:ff:ff", basic(bootToken))
                      .body()
                      .toString()))
          .containsEntry("warmmetal.image", V1);
      fx.client.put(
          "/v1/pools/x86-16c-64g",
          ApiFixture.ADMIN,
          new JsonObject().put("minWarm", 1).put("maxWarm", 1));

      // The next boot gets another token; it may take back this hardware's machine only while
      // nobody uses it.
      String next =
          cmdline(
                  get(http, fx.api.port(), "/v1/boot/ipxe?mac=" + mac, basic(bootToken))
                      .body()
                      .toString())
              .get("warmmetal.token");
      assertThat(next).isNotEqualTo(params.get("warmmetal.token"));
      Path state = Files.createTempDirectory("pxe-agent");
      identity.save(state);
      WebSocketClient ws =
          vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
      SimulatedAgent agent =
          SimulatedAgent.start(
                  vertx,
                  enrollment,
                  ws,
                  URI.create("https://127.0.0.1:" + fx.api.agentPort()),
                  null,
                  host,
                  state,
                  new SimulatedExecutor(
                      vertx,
                      Map.of("prepare", Distribution.parse("fixed:10ms")),
                      0.0,
                      new Random(1)))
              .await();
      Await.until(
          "warm",
          () ->
              "warm"
                  .equals(
                      fx.client
                          .get("/v1/machines/" + identity.machineId(), ApiFixture.ADMIN)
                          .body()
                          .getString("state")));
      assertThatThrownBy(() -> enrollment.enroll(next, host).await())
          .hasMessageContaining("cannot re-enroll with a boot token");
      agent.stop().await();
      ws.close().await();
      enrollment.close().await();

      // A boot token opens nothing else; bad labels and identities are a 400, a boot without a MAC
      // too.
      assertThat(get(http, fx.api.port(), "/v1/machines", "Bearer " + bootToken).status())
          .isEqualTo(403);
      assertThat(get(http, fx.api.port(), "/v1/boot/images", "Bearer " + bootToken).status())
          .isEqualTo(403);
      assertThat(
              get(
                      http,
                      fx.api.port(),
                      "/v1/boot/ipxe?mac=" + mac + "&labels=a%3Db%3Dc",
                      basic(bootToken))
                  .status())
          .isEqualTo(400);
      assertThat(get(http, fx.api.port(), "/v1/boot/ipxe", basic(bootToken)).status())
          .isEqualTo(400);
      assertThat(get(http, fx.api.port(), "/v1/boot/ipxe?mac=not-a-mac", basic(bootToken)).status())
          .isEqualTo(400);

      // What is installed, and which image is the default.
      JsonArray images =
          fx.client.get("/v1/boot/images", ApiFixture.ADMIN).body().getJsonArray("items");
      assertThat(images.stream().map(i -> ((JsonObject) i).getString("version")))
          .containsExactly(V1, V2);
      assertThat(images.getJsonObject(0).getBoolean("default")).isTrue();
      assertThat(images.getJsonObject(1).getBoolean("default")).isFalse();
      assertThat(images.getJsonObject(0).getLong("bootBytes"))
          .isEqualTo(v1.values().stream().mapToLong(b -> b.length).sum());

      // The images' files: served to anyone (no secrets in them), byte for byte; only the files a
      // manifest names.
      Answer file = get(http, fx.api.port(), "/v1/boot/images/" + V1 + "/os.squashfs", null);
      assertThat(file.status()).isEqualTo(200);
      assertThat(file.body().getBytes()).isEqualTo(v1.get("os.squashfs"));
      assertThat(get(http, fx.api.port(), "/v1/boot/files/vmlinuz", null).body().getBytes())
          .isEqualTo(v1.get("vmlinuz"));
      assertThat(
              get(http, fx.api.port(), "/v1/boot/images/" + V1 + "/not-in-the-manifest", null)
                  .status())
          .isEqualTo(404);
      assertThat(get(http, fx.api.port(), "/v1/boot/images/v0.0.0-none/vmlinuz", null).status())
          .isEqualTo(404);
      assertThat(
              get(http, fx.api.port(), "/v1/boot/images/" + V1 + "/..%2F..%2Fsecret.key", null)
                  .status())
          .isIn(400, 404);
      assertThat(get(http, fx.api.port(), "/v1/boot/images/..%2F" + V1 + "/vmlinuz", null).status())
          .isIn(400, 404);
      http.close().await();
    }
  }

  @Test
  void withoutAnImageInstalledTheScriptIsA404SayingHowToBuildOne(Vertx vertx) throws Exception {
    Path bootDir = Files.createTempDirectory("boot");
    try (ApiFixture fx =
        ApiFixture.start(vertx, Map.of("WARMMETAL_BOOT_DIR", bootDir.toString()))) {
      HttpClient http = vertx.createHttpClient();
      String bootToken =
          fx.client
              .post(
                  "/v1/tokens",
                  ApiFixture.ADMIN,
                  new JsonObject().put("name", "pxe").put("role", "boot"))
              .body()
              .getString("token");
      Answer answer =
          get(http, fx.api.port(), "/v1/boot/ipxe?mac=52:54:00:00:00:01", basic(bootToken));
      assertThat(answer.status()).isEqualTo(404);
      assertThat(new JsonObject(answer.body()).getString("message"))
          .contains("images/node/build.sh --install");
      assertThat(fx.count("SELECT count(*) FROM enrollment_tokens"))
          .isZero(); // no token minted for nothing
      // Two images and no default: the operator is told how to choose.
      BootImageFixture.install(bootDir, V1, 1);
      BootImageFixture.install(bootDir, V2, 2);
      answer = get(http, fx.api.port(), "/v1/boot/ipxe?mac=52:54:00:00:00:01", basic(bootToken));
      assertThat(answer.status()).isEqualTo(404);
      assertThat(new JsonObject(answer.body()).getString("message"))
          .contains("WARMMETAL_BOOT_IMAGE");
      http.close().await();
    }
  }
}
