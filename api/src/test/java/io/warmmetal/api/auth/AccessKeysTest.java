package io.warmmetal.api.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.SecretBox;
import io.warmmetal.api.testing.ApiFixture;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import software.amazon.awssdk.http.SdkHttpMethod;

/**
 * Access keys on the real server's database: minted with tokens through the API, sealed with the
 * server's own secret key, signed by AWS's signer, authenticated as the token.
 */
@ExtendWith(VertxExtension.class)
class AccessKeysTest {
  private static final Instant NOW = Instant.parse("2026-12-03T09:00:00Z");
  private static final String FORM = "Action=DescribeInstances&Version=2016-11-15";

  private static ApiFixture fx;
  private static SecretBox box;
  private static AccessKeys keys;

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
    assertThat(fx.client.put("/v1/projects/team-a", ApiFixture.ADMIN, new JsonObject()).status())
        .isIn(200, 201);
    box = SecretBox.load(Optional.empty(), fx.dataDir); // the server's key file
    keys = new AccessKeys(vertx, fx.db(), box, Clock.fixed(NOW, ZoneOffset.UTC));
  }

  @AfterAll
  static void stop() {
    fx.close();
  }

  private static JsonObject mint(String role, String project) {
    return fx.mintToken(role + "-key", role, project);
  }

  private static AwsSigning signer(JsonObject token) {
    return AwsSigning.of(token.getString("accessKeyId"), token.getString("secretAccessKey"), NOW);
  }

  private static Principal authenticate(SignedRequest request) {
    return keys.authenticate(request).await();
  }

  private static void refused(SignedRequest request, String code, int status) {
    assertThatThrownBy(() -> authenticate(request))
        .isInstanceOfSatisfying(
            SignatureFailure.class,
            f -> {
              assertThat(f.code()).as(f.getMessage()).isEqualTo(code);
              assertThat(f.status()).isEqualTo(status);
            });
  }

  @Test
  void aTokensKeyAuthenticatesAsItsToken() {
    JsonObject client = mint("client", "team-a");
    Principal p = authenticate(signer(client).postForm("/ec2/", FORM));
    assertThat(p.tokenId()).isEqualTo(client.getString("id"));
    assertThat(p.name()).isEqualTo("client-key");
    assertThat(p.role()).isEqualTo(Role.CLIENT);
    assertThat(p.project()).isEqualTo("team-a");

    JsonObject reader = mint("fleet-reader", "default");
    SignedRequest presigned =
        signer(reader)
            .presigned(Duration.ofMinutes(5))
            .sign(
                AwsSigning.request(SdkHttpMethod.GET, "/ec2/")
                    .putRawQueryParameter("Action", "DescribeInstances")
                    .build(),
                null);
    Principal operator = authenticate(presigned);
    assertThat(operator.role()).isEqualTo(Role.FLEET_READER);
    assertThat(operator.project()).isEqualTo("default");
  }

  @Test
  void aRevokedTokensKeyIsRefusedAtOnce() {
    JsonObject token = mint("client", "default");
    SignedRequest request = signer(token).postForm("/ec2/", FORM);
    assertThat(authenticate(request).tokenId()).isEqualTo(token.getString("id"));
    assertThat(fx.client.delete("/v1/tokens/" + token.getString("id"), ApiFixture.ADMIN).status())
        .isEqualTo(204);
    refused(request, "AuthFailure", 401);
  }

  @Test
  void anUnknownKeyOrTheWrongSecret() {
    JsonObject token = mint("read-only", "default");
    refused(
        AwsSigning.of("AKWMAAAAAAAAAAAAAAAA", token.getString("secretAccessKey"), NOW)
            .postForm("/ec2/", FORM),
        "AuthFailure",
        401);
    refused(
        AwsSigning.of(token.getString("accessKeyId"), "x".repeat(40), NOW).postForm("/ec2/", FORM),
        "SignatureDoesNotMatch",
        403);
    // Refused before any lookup: signed 16 minutes ago.
    refused(
        signer(token).at(NOW.minus(Duration.ofMinutes(16))).postForm("/ec2/", FORM),
        "RequestExpired",
        400);
  }

  @Test
  void aBootTokenHasNoKeyAndCannotBeGivenOne() {
    JsonObject boot = mint("boot", "default");
    assertThat(boot.getValue("accessKeyId")).isNull();
    assertThat(boot.containsKey("secretAccessKey")).isFalse();
    assertThat(
            fx.count(
                "SELECT count(*) FROM api_tokens WHERE (role = 'boot' OR bootstrap)"
                    + " AND access_key_id IS NULL"))
        .isEqualTo(2); // this boot token and the bootstrap admin token: neither has a key
    assertThatThrownBy(
            () ->
                fx.db()
                    .preparedQuery(
                        "UPDATE api_tokens SET access_key_id = 'AKWMBOOTBOOTBOOTBOOT',"
                            + " access_key_secret = '\\x00' WHERE id = $1")
                    .execute(Tuple.of(boot.getString("id")))
                    .await())
        .hasMessageContaining("api_tokens_boot_no_access_key");
  }

  @Test
  void theSecretIsStoredSealedAndBoundToItsKey() throws Exception {
    JsonObject token = mint("client", "default");
    String id = token.getString("accessKeyId");
    String secret = token.getString("secretAccessKey");
    assertThat(
            fx.count(
                "SELECT count(*) FROM api_tokens"
                    + " WHERE position(convert_to($1, 'UTF8') in access_key_secret) > 0",
                secret))
        .isZero();
    Buffer sealed =
        fx.db()
            .preparedQuery("SELECT access_key_secret FROM api_tokens WHERE access_key_id = $1")
            .execute(Tuple.of(id))
            .await()
            .iterator()
            .next()
            .getBuffer(0);
    assertThat(
            new String(box.open(sealed.getBytes(), AccessKeys.boundTo(id)), StandardCharsets.UTF_8))
        .isEqualTo(secret);
    assertThatThrownBy(
            () -> box.open(sealed.getBytes(), AccessKeys.boundTo("AKWMAAAAAAAAAAAAAAAA")))
        .isInstanceOf(GeneralSecurityException.class);
  }

  /**
   * Through a real socket, as the EC2 endpoint will receive it: Vert.x's {@code path()} and {@code
   * query()} are the request line's, not decoded, and the Host header is the one the client signed.
   */
  @Test
  void aRequestAsVertxReceivesIt(Vertx vertx) {
    JsonObject token = mint("client", "default");
    HttpServer server =
        vertx
            .createHttpServer()
            .requestHandler(
                req ->
                    req.body()
                        .compose(
                            body ->
                                keys.authenticate(
                                    new SignedRequest(
                                        req.method().name(),
                                        req.path(),
                                        req.query(),
                                        req.headers(),
                                        body.getBytes())))
                        .onComplete(
                            ar ->
                                req.response()
                                    .end(
                                        ar.succeeded()
                                            ? ar.result().tokenId()
                                            : ((SignatureFailure) ar.cause()).code())))
            .listen(0, AwsSigning.HOST)
            .await();
    HttpClientAgent http = vertx.createHttpClient();
    try {
      SignedRequest signed =
          signer(token)
              .sign(
                  AwsSigning.request(SdkHttpMethod.POST, server.actualPort(), "/ec2/a%2Fb/$!/")
                      .putRawQueryParameter("Filter.1.Value.1", "a b+ü/~")
                      .putHeader("Content-Type", "application/x-www-form-urlencoded")
                      .build(),
                  FORM);
      Function<String, String> send =
          body ->
              http.request(
                      new RequestOptions()
                          .setMethod(HttpMethod.POST)
                          .setHost(AwsSigning.HOST)
                          .setPort(server.actualPort())
                          .setURI(signed.rawPath() + "?" + signed.rawQuery())
                          .setHeaders(signed.headers()))
                  .compose(request -> request.send(body))
                  .compose(HttpClientResponse::body)
                  .await()
                  .toString();
      assertThat(send.apply(FORM)).isEqualTo(token.getString("id"));
      assertThat(send.apply(FORM + "&DryRun=false")).isEqualTo("SignatureDoesNotMatch");
    } finally {
      http.close().await();
      server.close().await();
    }
  }

  @Test
  void theListAnswerShowsTheKeyIdAndNeverItsSecret() {
    JsonObject token = mint("client", "default");
    var listed = fx.client.get("/v1/tokens", ApiFixture.ADMIN);
    assertThat(listed.status()).isEqualTo(200);
    assertThat(listed.raw())
        .contains(token.getString("accessKeyId"))
        .doesNotContain(token.getString("secretAccessKey"), "secretAccessKey");
  }
}
