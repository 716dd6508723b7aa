package io.warmmetal.api.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.agent.enrollment.AgentIdentity;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.fleet.SimulatedAgent;
import io.warmmetal.api.testing.Await;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.warmmetal.api.testing.ApiFixture;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Network boot from the API: the iPXE script, fetched the way iPXE fetches it (credentials in the URL, so Basic
 * authentication), carries a working single-use enrollment token; the image's files are served to anyone.
 */
@ExtendWith(VertxExtension.class)
class NetworkBootTest {

  private record Answer(int status, String contentType, Buffer body) {}

  private static Answer get(HttpClient http, int port, String path, String authorization) {
    RequestOptions options = new RequestOptions().setMethod(HttpMethod.GET).setHost("127.0.0.1").setPort(port)
        .setURI(path);
    if (authorization != null) {
      options.putHeader("Authorization", authorization);
    }
    // A time limit: an answer that never comes fails the test instead of hanging the build.
    return http.request(options).compose(req -> req.send())
        .compose(resp -> resp.body().map(b -> new Answer(resp.statusCode(), resp.getHeader("Content-Type"), b)))
        .timeout(30, java.util.concurrent.TimeUnit.SECONDS).await();
  }

  private static String basic(String token) {
    return "Basic " + Base64.getEncoder().encodeToString(("boot:" + token).getBytes(StandardCharsets.UTF_8));
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
  void theIpxeScriptBootsTheImageWithAFreshSingleUseEnrollmentToken(Vertx vertx) throws Exception {
    Path bootDir = Files.createTempDirectory("boot");
    byte[] kernel = new byte[100_000];
    new java.util.Random(7).nextBytes(kernel);
    Files.write(bootDir.resolve("vmlinuz"), kernel);
    try (ApiFixture fx = ApiFixture.start(vertx, Map.of("WARMMETAL_BOOT_DIR", bootDir.toString(),
        "WARMMETAL_BOOT_CMDLINE", "console=ttyS0 quiet"))) {
      HttpClient http = vertx.createHttpClient();
      String bootToken = fx.client.post("/v1/tokens", ApiFixture.ADMIN, new JsonObject().put("name", "pxe")
          .put("role", "boot")).body().getString("token");

      assertThat(get(http, fx.api.port(), "/v1/boot/ipxe", null).status()).isEqualTo(401);
      Answer answer = get(http, fx.api.port(), "/v1/boot/ipxe?labels=rack%3Dr9,boot%3Dpxe", basic(bootToken));
      assertThat(answer.status()).as(answer.body().toString()).isEqualTo(200);
      assertThat(answer.contentType()).startsWith("text/plain");
      String script = answer.body().toString();
      assertThat(script).startsWith("#!ipxe\n").contains("\nboot\n");
      String base = "http://127.0.0.1:" + fx.api.port() + "/v1/boot/files/";
      assertThat(script).contains("kernel " + base + "vmlinuz ").contains("\ninitrd " + base + "initrd.img\n");
      Map<String, String> params = cmdline(script);
      assertThat(params).containsEntry("console", "ttyS0").containsEntry("initrd", "initrd.img")
          .containsEntry("warmmetal.ca_pin", fx.api.caPin().value())
          .containsEntry("warmmetal.api", "https://localhost:" + fx.api.agentPort());

      // The token works once: the booted agent enrolls with it (and gets the labels); nobody can again.
      Enrollment enrollment = new Enrollment(vertx, URI.create("https://127.0.0.1:" + fx.api.agentPort()),
          fx.api.caPin());
      JsonObject host = new JsonObject().put("name", "pxe-1").put("facts", ApiFixture.facts(16, 64))
          .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
      AgentIdentity identity = enrollment.enroll(params.get("warmmetal.token"), host).await();
      assertThat(fx.client.get("/v1/machines/" + identity.machineId(), ApiFixture.ADMIN).body()
          .getJsonObject("labels").getMap()).containsEntry("rack", "r9").containsEntry("boot", "pxe");
      assertThatThrownBy(() -> enrollment.enroll(params.get("warmmetal.token"), host).await())
          .hasMessageContaining("used up");
      // The next boot gets another token; it may take back this hardware's machine only while nobody uses it.
      String next = cmdline(get(http, fx.api.port(), "/v1/boot/ipxe", basic(bootToken)).body().toString())
          .get("warmmetal.token");
      assertThat(next).isNotEqualTo(params.get("warmmetal.token"));
      Path state = Files.createTempDirectory("pxe-agent");
      identity.save(state);
      WebSocketClient ws = vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
      SimulatedAgent agent = SimulatedAgent.start(vertx, enrollment, ws, URI.create("https://127.0.0.1:"
          + fx.api.agentPort()), null, host, state, new SimulatedExecutor(vertx, Map.of("prepare",
              Distribution.parse("fixed:10ms")), 0.0, new java.util.Random(1))).await();
      fx.client.put("/v1/pools/x86-16c-64g", ApiFixture.ADMIN, new JsonObject().put("minWarm", 1).put("maxWarm", 1));
      Await.until("warm", () -> "warm".equals(fx.client.get("/v1/machines/" + identity.machineId(),
          ApiFixture.ADMIN).body().getString("state")));
      assertThatThrownBy(() -> enrollment.enroll(next, host).await()).hasMessageContaining("cannot re-enroll with a boot token");
      agent.stop().await();
      ws.close().await();
      enrollment.close().await();

      // A boot token opens nothing else; bad labels are a 400.
      assertThat(get(http, fx.api.port(), "/v1/machines", "Bearer " + bootToken).status()).isEqualTo(403);
      assertThat(get(http, fx.api.port(), "/v1/boot/ipxe?labels=a%3Db%3Dc", basic(bootToken)).status())
          .isEqualTo(400);

      // The image's files: served to anyone (no secrets in them), byte for byte; nothing outside the directory.
      Answer file = get(http, fx.api.port(), "/v1/boot/files/vmlinuz", null);
      assertThat(file.status()).isEqualTo(200);
      assertThat(file.body().getBytes()).isEqualTo(kernel);
      assertThat(get(http, fx.api.port(), "/v1/boot/files/initrd.img", null).status()).isEqualTo(404);
      assertThat(get(http, fx.api.port(), "/v1/boot/files/..%2Fsecret.key", null).status()).isIn(400, 404);
      http.close().await();
    }
  }
}
