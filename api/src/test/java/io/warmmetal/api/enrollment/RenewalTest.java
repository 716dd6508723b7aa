package io.warmmetal.api.enrollment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.enrollment.AgentIdentity;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.fleet.SimulatedAgent;
import io.warmmetal.protocol.testing.Await;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Client certificates are renewed over mutual TLS before they expire; the renewed one replaces the
 * current one when the agent first holds the channel with it, and from then on only it counts.
 */
@ExtendWith(VertxExtension.class)
class RenewalTest {

  private static String serial(ApiFixture fx, String column, String machine) {
    Object v =
        fx.db()
            .preparedQuery("SELECT " + column + " FROM machines WHERE id = $1")
            .execute(Tuple.of(machine))
            .await()
            .iterator()
            .next()
            .getValue(0);
    return (String) v;
  }

  @Test
  void aRenewedCertificateTakesOverWhenItFirstHoldsTheChannel(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx, Map.of("WARMMETAL_AGENT_CERT_DAYS", "30"))) {
      URI api = URI.create("https://127.0.0.1:" + fx.api.agentPort());
      Enrollment enrollment = new Enrollment(vertx, api, fx.api.caPin());
      WebSocketClient ws =
          vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
      String token =
          fx.client
              .post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject())
              .body()
              .getString("token");
      JsonObject host =
          new JsonObject()
              .put("name", "renewing")
              .put("facts", ApiFixture.facts(16, 64))
              .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
      AgentIdentity first = enrollment.enroll(token, host).await();
      String machine = first.machineId();
      String firstSerial = first.certificate().getSerialNumber().toString(16);
      assertThat(first.renewalDue(Instant.now(), null)).isFalse();
      assertThat(first.renewalDue(Instant.now().plus(Duration.ofDays(21)), null))
          .isTrue(); // last third of 30 days

      AgentIdentity renewed = Enrollment.renew(vertx, api, first).await();
      String renewedSerial = renewed.certificate().getSerialNumber().toString(16);
      assertThat(renewed.machineId()).isEqualTo(machine);
      assertThat(renewed.keyPem()).isNotEqualTo(first.keyPem());
      // Not yet used: the current certificate still counts, the renewed one waits.
      assertThat(serial(fx, "cert_serial", machine)).isEqualTo(firstSerial);
      assertThat(serial(fx, "next_cert_serial", machine)).isEqualTo(renewedSerial);

      // The agent saves it crash-safe and holds the channel with it: now it is the machine's only
      // certificate.
      Path state = Files.createTempDirectory("renewal");
      first.save(state);
      renewed.saveRenewed(state);
      assertThat(AgentIdentity.load(state).orElseThrow().certificatePem())
          .isEqualTo(renewed.certificatePem());
      SimulatedAgent agent =
          SimulatedAgent.start(
                  vertx,
                  enrollment,
                  ws,
                  api,
                  null,
                  host,
                  state,
                  new SimulatedExecutor(
                      vertx,
                      Map.of("prepare", Distribution.parse("fixed:10ms")),
                      0.0,
                      new Random(1)))
              .await();
      Await.until("connected", agent::connected);
      assertThat(serial(fx, "cert_serial", machine)).isEqualTo(renewedSerial);
      assertThat(serial(fx, "next_cert_serial", machine)).isNull();
      Await.until(
          "standby",
          () ->
              "standby"
                  .equals(
                      fx.client
                          .get("/v1/machines/" + machine, ApiFixture.ADMIN)
                          .body()
                          .getString("state")));

      // The old certificate renews nothing any more.
      assertThatThrownBy(() -> Enrollment.renew(vertx, api, first).await())
          .hasMessageContaining("401");
      agent.stop().await();
      ws.close().await();
      enrollment.close().await();
    }
  }

  @Test
  void aSessionWhoseCertificateWasReplacedIsClosed(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx, Map.of("WARMMETAL_HEARTBEAT_SECONDS", "1"))) {
      URI api = URI.create("https://127.0.0.1:" + fx.api.agentPort());
      Enrollment enrollment = new Enrollment(vertx, api, fx.api.caPin());
      WebSocketClient ws =
          vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
      String token =
          fx.client
              .post(
                  "/v1/enrollment-tokens",
                  ApiFixture.ADMIN,
                  new JsonObject().put("uses", 2).put("allowReenroll", true))
              .body()
              .getString("token");
      JsonObject host =
          new JsonObject()
              .put("name", "taken")
              .put("facts", ApiFixture.facts(16, 64))
              .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
      SimulatedAgent agent =
          SimulatedAgent.start(
                  vertx,
                  enrollment,
                  ws,
                  api,
                  token,
                  host,
                  Files.createTempDirectory("replaced"),
                  new SimulatedExecutor(vertx, Map.of(), 0.0, new Random(2)))
              .await();
      Await.until("connected", agent::connected);

      // The same hardware enrolls again (an operator's allowReenroll token): the open session's
      // certificate is
      // no longer the machine's, and the next sweep closes it; it cannot come back with it.
      enrollment.enroll(token, host).await();
      Await.until("the old session closed", () -> !agent.connected());
      // The agent keeps trying (with backoff); three of its tries refused at the handshake, it is
      // still out.
      long refused = fx.api.channel().handshakesRefused();
      Await.until(
          "three more tries refused (or one let in)",
          () -> fx.api.channel().handshakesRefused() >= refused + 3 || agent.connected());
      assertThat(agent.connected()).isFalse();
      agent.stop().await();
      ws.close().await();
      enrollment.close().await();
    }
  }
}
