package io.warmmetal.api.enrollment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.agent.enrollment.AgentIdentity;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.agent.enrollment.Enrollment.EnrollmentRefused;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.protocol.CaPin;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The real agent's enrollment against the real API's TLS agent port, and every refusal. */
@ExtendWith(VertxExtension.class)
class EnrollmentTest {
  private static ApiFixture fx;
  private static Enrollment agent;

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
    agent =
        new Enrollment(
            vertx, URI.create("https://127.0.0.1:" + fx.api.agentPort()), fx.api.caPin());
  }

  @AfterAll
  static void stop() {
    agent.close().await();
    fx.close();
  }

  private static String token(int uses, JsonObject labels) {
    return token(uses, labels, false);
  }

  private static String token(int uses, JsonObject labels, boolean allowReenroll) {
    Response r =
        fx.client.post(
            "/v1/enrollment-tokens",
            ApiFixture.ADMIN,
            new JsonObject()
                .put("uses", uses)
                .put("labels", labels)
                .put("allowReenroll", allowReenroll));
    assertThat(r.status()).as(r.raw()).isEqualTo(201);
    return r.body().getString("token");
  }

  private static JsonObject host(String uuid) {
    return new JsonObject()
        .put("name", "host-" + uuid.substring(0, 8))
        .put("address", "127.0.0.1")
        .put("facts", ApiFixture.facts(16, 64))
        .put("identity", new JsonObject().put("systemUuid", uuid));
  }

  private static X509Certificate parse(String pem) throws Exception {
    return (X509Certificate)
        CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
  }

  @Test
  void anAgentEnrollsAndGetsACertificateBoundToItsMachine() throws Exception {
    String token = token(2, new JsonObject().put("rack", "r9"));
    String reenroll = token(1, new JsonObject(), true);
    String uuid = UUID.randomUUID().toString();
    AgentIdentity identity = agent.enroll(token, host(uuid)).await();

    JsonObject machine =
        fx.client.get("/v1/machines/" + identity.machineId(), ApiFixture.ADMIN).body();
    assertThat(machine.getString("state")).isEqualTo("enrolling");
    assertThat(machine.getJsonObject("labels").getString("rack")).isEqualTo("r9");
    assertThat(machine.getString("shape")).isEqualTo("x86-16c-64g");

    X509Certificate cert = parse(identity.certificatePem());
    X509Certificate ca = parse(identity.caPem());
    cert.verify(ca.getPublicKey());
    assertThat(CaPin.of(ca)).isEqualTo(fx.api.caPin());
    assertThat(cert.getSubjectX500Principal().getName()).contains("CN=" + identity.machineId());
    assertThat(cert.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.2"); // client auth only
    assertThat(identity.keyPem()).contains("PRIVATE KEY");

    // The same hardware enrolling again with an ordinary token would take the machine over:
    // refused.
    assertThatThrownBy(() -> agent.enroll(token, host(uuid)).await())
        .isInstanceOf(EnrollmentRefused.class)
        .satisfies(e -> assertThat(((EnrollmentRefused) e).code()).isEqualTo("Conflict"))
        .hasMessageContaining(identity.machineId());
    // With a token minted for re-enrollment it gets its machine back, with a new certificate.
    AgentIdentity again = agent.enroll(reenroll, host(uuid)).await();
    assertThat(again.machineId()).isEqualTo(identity.machineId());
    assertThat(parse(again.certificatePem()).getSerialNumber())
        .isNotEqualTo(cert.getSerialNumber());
    assertThat(fx.count("SELECT count(*) FROM machines WHERE system_uuid = $1", uuid)).isEqualTo(1);
    assertThat(
            fx.count(
                "SELECT count(*) FROM machines WHERE id = $1 AND cert_serial = $2",
                identity.machineId(),
                parse(again.certificatePem()).getSerialNumber().toString(16)))
        .isEqualTo(1);
  }

  @Test
  void unknownUsedUpExpiredAndRevokedTokensAreRefused() {
    assertRefused("wme_not-a-token", "unknown");

    String once = token(1, new JsonObject());
    agent.enroll(once, host(UUID.randomUUID().toString())).await();
    assertRefused(once, "used up");

    String expiring = token(1, new JsonObject());
    fx.db()
        .query(
            "UPDATE enrollment_tokens SET expires_at = now() - interval '1 second' WHERE uses_left = 1")
        .execute()
        .await();
    assertRefused(expiring, "expired");

    Response created = fx.client.post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject());
    assertThat(
            fx.client
                .delete("/v1/enrollment-tokens/" + created.body().getString("id"), ApiFixture.ADMIN)
                .status())
        .isEqualTo(204);
    assertRefused(created.body().getString("token"), "revoked");
  }

  @Test
  void aKnownServerRefusedForAnUnknownUsedOrExpiredTokenSaysWhyOnItsTimeline() {
    String used = token(1, new JsonObject());
    Response expiringToken =
        fx.client.post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject());
    String expiring = expiringToken.body().getString("token");
    fx.db()
        .query(
            "UPDATE enrollment_tokens SET expires_at = now() - interval '1 second' WHERE id = '"
                + expiringToken.body().getString("id")
                + "'")
        .execute()
        .await();
    for (String[] refused :
        new String[][] {{"wme_not-a-token", "unknown"}, {used, "used up"}, {expiring, "expired"}}) {
      // A server the fleet knows (enrolled once), booting again with a token that will not do.
      String uuid = UUID.randomUUID().toString();
      agent.enroll(token(1, new JsonObject()), host(uuid)).await();
      if (refused[0].equals(used)) {
        agent.enroll(used, host(UUID.randomUUID().toString())).await(); // its one use gone
      }
      assertThatThrownBy(() -> agent.enroll(refused[0], host(uuid)).await())
          .isInstanceOf(EnrollmentRefused.class)
          .hasMessageContaining(refused[1]);
      assertThat(
              fx.count(
                  "SELECT count(*) FROM events e JOIN machines m ON m.id = e.machine_id"
                      + " WHERE e.type = 'EnrollmentRefused' AND m.system_uuid = '"
                      + uuid
                      + "' AND e.reason LIKE 'enrollment refused: %"
                      + refused[1]
                      + "%'"))
          .as("an EnrollmentRefused event saying '%s'", refused[1])
          .isEqualTo(1);
    }
  }

  private static void assertRefused(String token, String why) {
    long machines = fx.count("SELECT count(*) FROM machines");
    assertThatThrownBy(() -> agent.enroll(token, host(UUID.randomUUID().toString())).await())
        .isInstanceOf(EnrollmentRefused.class)
        .hasMessageContaining(why)
        .satisfies(e -> assertThat(((EnrollmentRefused) e).status()).isEqualTo(401));
    assertThat(fx.count("SELECT count(*) FROM machines")).isEqualTo(machines);
  }

  @Test
  void anAgentWithTheWrongPinSendsNothing(Vertx vertx) {
    String token = token(1, new JsonObject());
    Enrollment misled =
        new Enrollment(
            vertx,
            URI.create("https://127.0.0.1:" + fx.api.agentPort()),
            new CaPin("sha256:" + "00".repeat(32)));
    try {
      assertThatThrownBy(() -> misled.enroll(token, host(UUID.randomUUID().toString())).await())
          .hasStackTraceContaining("pinned CA");
    } finally {
      misled.close().await();
    }
    // The token was never presented: its use is still there.
    assertThat(
            fx.count(
                "SELECT count(*) FROM enrollment_tokens WHERE uses_left = 1 AND revoked_at IS NULL"
                    + " AND expires_at > now()"))
        .isGreaterThanOrEqualTo(1);
    agent.enroll(token, host(UUID.randomUUID().toString())).await();
  }

  @Test
  void retiredHardwareCannotEnrollAgainAndBadRequestsNameTheField() {
    String token = token(3, new JsonObject());
    String uuid = UUID.randomUUID().toString();
    AgentIdentity identity = agent.enroll(token, host(uuid)).await();
    fx.client.post("/v1/machines/" + identity.machineId() + "/retire", ApiFixture.ADMIN, null);
    assertThatThrownBy(() -> agent.enroll(token, host(uuid)).await())
        .isInstanceOf(EnrollmentRefused.class)
        .satisfies(e -> assertThat(((EnrollmentRefused) e).code()).isEqualTo("InvalidState"));

    JsonObject noIdentity = host(UUID.randomUUID().toString());
    noIdentity.remove("identity");
    assertThatThrownBy(() -> agent.enroll(token, noIdentity).await())
        .isInstanceOf(EnrollmentRefused.class)
        .satisfies(e -> assertThat(((EnrollmentRefused) e).status()).isEqualTo(400))
        .hasMessageContaining("identity");
  }

  @Test
  void tokensLongExpiredAreDeletedButNotOnesStillInUseOrUnexpired() throws Exception {
    Response fresh = fx.client.post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject());
    Response old = fx.client.post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject());
    // Time passes for one of them (set back by hand: the test cannot wait a week).
    fx.db()
        .preparedQuery(
            "UPDATE enrollment_tokens SET expires_at = now() - interval '8 days' WHERE id = $1")
        .execute(Tuple.of(old.body().getString("id")))
        .await();
    EnrollmentTokens tokens = new EnrollmentTokens(fx.vertx, fx.db());
    assertThat(tokens.deleteStale(Duration.ofDays(7)).await()).isEqualTo(1);
    assertThat(
            fx.count(
                "SELECT count(*) FROM enrollment_tokens WHERE id = $1", old.body().getString("id")))
        .isZero();
    assertThat(
            fx.count(
                "SELECT count(*) FROM enrollment_tokens WHERE id = $1",
                fresh.body().getString("id")))
        .isEqualTo(1);
  }
}
