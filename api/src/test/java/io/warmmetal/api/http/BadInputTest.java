package io.warmmetal.api.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import java.util.Base64;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad input: a 4xx in the one error shape naming the problem, and nothing written. */
@ExtendWith(VertxExtension.class)
class BadInputTest {
  private static ApiFixture fx;

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
    fx.registerMachines(3, ApiFixture.facts(8, 32), true);
  }

  @AfterAll
  static void stop() {
    fx.close();
  }

  private long written() {
    return fx.count(
        "SELECT (SELECT count(*) FROM instances) + (SELECT count(*) FROM launches)"
            + " + (SELECT count(*) FROM machines) + (SELECT count(*) FROM events) + (SELECT count(*) FROM pools)"
            + " + (SELECT count(*) FROM commands)");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "wrong type          | {\"shape\":\"x86-8c-32g\",\"minCount\":\"two\"}                  | minCount",
        "below minimum       | {\"shape\":\"x86-8c-32g\",\"minCount\":0}                        | minCount",
        "above maximum       | {\"shape\":\"x86-8c-32g\",\"maxCount\":5000}                     | maxCount",
        "unknown property    | {\"shape\":\"x86-8c-32g\",\"mincount\":1}                        | mincount",
        "max below min       | {\"shape\":\"x86-8c-32g\",\"minCount\":3,\"maxCount\":2}          | maxCount",
        "shape and shapes    | {\"shape\":\"x86-8c-32g\",\"shapes\":[\"x86-8c-32g\"]}            | shapes",
        "no shape            | {\"minCount\":1}                                                 | shape",
        "bad shape name      | {\"shape\":\"X86 8c\"}                                            | shape",
        "token too long      | {\"shape\":\"x86-8c-32g\",\"clientToken\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"} | clientToken",
        "bad label key       | {\"shape\":\"x86-8c-32g\",\"labels\":{\"bad key\":\"v\"}}          | labels.bad key",
        "bad bootstrap token | {\"shape\":\"x86-8c-32g\",\"kubernetes\":{\"apiServer\":\"a:6443\",\"caCertHash\":\"sha256:00\",\"bootstrapToken\":\"abcdef.0123456789abcdef\"}} | kubernetes.caCertHash",
        "missing join field  | {\"shape\":\"x86-8c-32g\",\"kubernetes\":{\"apiServer\":\"a:6443\"}} | kubernetes.caCertHash",
        "bad taint effect    | {\"shape\":\"x86-8c-32g\",\"kubernetes\":{\"apiServer\":\"a\",\"caCertHash\":\"sha256:"
            + "0000000000000000000000000000000000000000000000000000000000000000"
            + "\",\"bootstrapToken\":\"abcdef.0123456789abcdef\",\"taints\":[{\"key\":\"k\",\"effect\":\"Sometimes\"}]}} | kubernetes.taints.0.effect",
        "userData not base64 | {\"shape\":\"x86-8c-32g\",\"userData\":\"%%%not base64%%%\"}       | userData",
        "userData and join   | {\"shape\":\"x86-8c-32g\",\"userData\":\"aGk=\",\"kubernetes\":{\"apiServer\":\"a\",\"caCertHash\":\"sha256:0000000000000000000000000000000000000000000000000000000000000000\",\"bootstrapToken\":\"abcdef.0123456789abcdef\"}} | userData",
        "not an object       | [1,2,3]                                                          | body",
        "not JSON            | {\"shape\":                                                       | body",
      })
  void malformedLaunchesAreRefusedNamingTheFieldAndWriteNothing(
      String what, String body, String field) {
    long before = written();
    Response r = fx.client.call(HttpMethod.POST, "/v1/instances", ApiFixture.ADMIN, body);
    assertThat(r.status()).as(what + ": " + r.raw()).isEqualTo(400);
    assertThat(r.errorCode()).isEqualTo("ValidationError");
    assertThat(r.body().getString("field")).as(r.raw()).isEqualTo(field);
    assertThat(r.body().getString("message")).isNotBlank();
    assertThat(r.body().getString("requestId")).isNotBlank();
    assertThat(written()).as("nothing written").isEqualTo(before);
  }

  @Test
  void valuesTheDatabaseRefusesAre400AndCursorsBeyondRangeToo() {
    long before = written();
    Response nul =
        fx.client.post(
            "/v1/machines",
            ApiFixture.ADMIN,
            new JsonObject().put("name", "bad\u0000name").put("facts", ApiFixture.facts(4, 16)));
    assertThat(nul.status()).as(nul.raw()).isEqualTo(400);
    assertThat(nul.errorCode()).isEqualTo("ValidationError");
    Response nulLabel =
        fx.client.post(
            "/v1/instances",
            ApiFixture.ADMIN,
            new JsonObject()
                .put("shape", "x86-8c-32g")
                .put("labels", new JsonObject().put("k", "v\u0000")));
    assertThat(nulLabel.status()).as(nulLabel.raw()).isEqualTo(400);
    assertThat(
            fx.client.get("/v1/instances?cursor=99999999999999999999", ApiFixture.ADMIN).status())
        .isEqualTo(400);
    assertThat(fx.client.get("/v1/events?since=99999999999999999999", ApiFixture.ADMIN).status())
        .isEqualTo(400);
    assertThat(written()).isEqualTo(before);
  }

  @Test
  void oversizedUserDataIsRefused() {
    long before = written();
    String big = Base64.getEncoder().encodeToString(new byte[65 * 1024]);
    Response r =
        fx.client.post(
            "/v1/instances",
            ApiFixture.ADMIN,
            new JsonObject().put("shape", "x86-8c-32g").put("userData", big));
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.body().getString("field")).isEqualTo("userData");
    assertThat(written()).isEqualTo(before);
  }

  @Test
  void aBodyAboveTheLimitIs413() {
    String huge = "{\"shape\":\"" + "a".repeat(300 * 1024) + "\"}";
    Response r = fx.client.call(HttpMethod.POST, "/v1/instances", ApiFixture.ADMIN, huge);
    assertThat(r.status()).isEqualTo(413);
    assertThat(r.errorCode()).isEqualTo("RequestTooLarge");
  }

  @Test
  void badMachineRegistrationsNameTheField() {
    long before = written();
    Response noMemory =
        fx.client.post(
            "/v1/machines",
            ApiFixture.ADMIN,
            new JsonObject()
                .put("name", "x")
                .put("facts", new JsonObject().put("cpus", 4).put("arch", "x86_64")));
    assertThat(noMemory.status()).isEqualTo(400);
    assertThat(noMemory.body().getString("field")).isEqualTo("facts.memoryMiB");
    Response badArch =
        fx.client.post(
            "/v1/machines",
            ApiFixture.ADMIN,
            new JsonObject()
                .put("name", "x")
                .put("facts", ApiFixture.facts(4, 16).put("arch", "sparc")));
    assertThat(badArch.body().getString("field")).isEqualTo("facts.arch");
    Response badMac =
        fx.client.post(
            "/v1/machines",
            ApiFixture.ADMIN,
            new JsonObject()
                .put("name", "x")
                .put("facts", ApiFixture.facts(4, 16))
                .put("identity", new JsonObject().put("primaryMac", "zz")));
    assertThat(badMac.body().getString("field")).isEqualTo("identity.primaryMac");
    assertThat(written()).isEqualTo(before);
  }

  @Test
  void badPoolTargetsAndParameters() {
    long before = written();
    Response inverted =
        fx.client.put(
            "/v1/pools/x86-8c-32g",
            ApiFixture.ADMIN,
            new JsonObject().put("minWarm", 5).put("maxWarm", 2));
    assertThat(inverted.status()).isEqualTo(400);
    assertThat(inverted.body().getString("field")).isEqualTo("maxWarm");
    Response negative =
        fx.client.put(
            "/v1/pools/x86-8c-32g",
            ApiFixture.ADMIN,
            new JsonObject().put("minWarm", -1).put("maxWarm", 2));
    assertThat(negative.body().getString("field")).isEqualTo("minWarm");
    Response unknownShape =
        fx.client.put(
            "/v1/pools/x86-1c-1g",
            ApiFixture.ADMIN,
            new JsonObject().put("minWarm", 1).put("maxWarm", 2));
    assertThat(unknownShape.status()).isEqualTo(404);
    Response badLimit = fx.client.get("/v1/machines?limit=100000", ApiFixture.ADMIN);
    assertThat(badLimit.status()).isEqualTo(400);
    assertThat(badLimit.body().getString("field")).isEqualTo("limit");
    Response badCursor = fx.client.get("/v1/machines?cursor=abc", ApiFixture.ADMIN);
    assertThat(badCursor.body().getString("field")).isEqualTo("cursor");
    Response badId = fx.client.get("/v1/machines/not-an-id", ApiFixture.ADMIN);
    assertThat(badId.body().getString("field")).isEqualTo("machineId");
    assertThat(written()).isEqualTo(before);
  }

  @Test
  void wrongMediaTypeUnknownRoutesAndMethods() {
    var http = WebClient.create(fx.vertx);
    var textBody =
        http.post(fx.api.port(), "127.0.0.1", "/v1/instances")
            .putHeader("Authorization", "Bearer " + ApiFixture.ADMIN)
            .putHeader("Content-Type", "text/plain")
            .sendBuffer(Buffer.buffer("hello"))
            .await();
    assertThat(textBody.statusCode()).isEqualTo(415);
    assertThat(textBody.bodyAsJsonObject().getString("code")).isEqualTo("UnsupportedMediaType");
    Response unknown = fx.client.get("/v1/nothing-here", ApiFixture.ADMIN);
    assertThat(unknown.status()).isEqualTo(404);
    assertThat(unknown.errorCode()).isEqualTo("NotFound");
    Response method = fx.client.call(HttpMethod.PUT, "/v1/instances", ApiFixture.ADMIN, "{}");
    assertThat(method.status()).isEqualTo(405);
    assertThat(method.errorCode()).isEqualTo("MethodNotAllowed");
  }

  /** Found by the contract fuzz (faults/ContractFuzzTest): each was a 500, or no answer at all. */
  static Stream<Arguments> fuzzFindings() {
    String form = "application/x-www-form-urlencoded";
    // A malformed escape is refused before anything reads the body (400); a form body alone is a
    // 415.
    return Stream.of(
        Arguments.of("GET", "/v1/events?since=%&limit=%", null, 400),
        Arguments.of("GET", "/v1/instances?machineId=%zz", null, 400),
        Arguments.of("GET", "/v1/shapes/x86-8c-32g?regionLabel=%", null, 400),
        Arguments.of("GET", "/v1/ssh-keys", form, 415),
        Arguments.of("GET", "/v1/machines?%=%00", "multipart/form-data; boundary=x", 400),
        Arguments.of("POST", "/v1/instances?%=%00", form, 400),
        Arguments.of("POST", "/v1/instances", form, 415));
  }

  @ParameterizedTest(name = "{0} {1} ({2}) → {3}")
  @MethodSource("fuzzFindings")
  void malformedQueryEscapesAndFormBodiesAre4xx(
      String method, String uri, String contentType, int status) {
    var http = WebClient.create(fx.vertx);
    var request =
        http.request(HttpMethod.valueOf(method), fx.api.port(), "127.0.0.1", uri)
            .putHeader("Authorization", "Bearer " + ApiFixture.ADMIN)
            .timeout(10_000);
    var response =
        contentType == null
            ? request.send().await()
            : request
                .putHeader("Content-Type", contentType)
                .sendBuffer(Buffer.buffer("a=1"))
                .await();
    assertThat(response.statusCode()).isEqualTo(status);
    assertThat(response.bodyAsJsonObject().getString("code"))
        .isEqualTo(status == 400 ? "ValidationError" : "UnsupportedMediaType");
  }
}
