package io.warmmetal.api.ec2;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.auth.AwsSigning;
import io.warmmetal.api.testing.ApiFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;

/**
 * The EC2 Query protocol on the wire, signed as the SDKs sign it but sent by hand: what no SDK
 * sends (an unknown action or parameter, a bad value, broken form encoding) is refused in EC2's
 * error shape with its codes — a 4xx naming the problem, never a 500.
 */
@ExtendWith(VertxExtension.class)
class Ec2ProtocolTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** What java.net.http sets itself, to the same values the signature covers. */
  private static final Set<String> SET_BY_CLIENT = Set.of("host", "content-length");

  private static ApiFixture fx;
  private static AwsBasicCredentials key;

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
    key = Ec2TestClients.accessKey(fx, "client", "default");
  }

  @AfterAll
  static void stop() {
    fx.close();
  }

  /** POSTs {@code form} to {@code path}, signed by {@code key} (SigV4, service ec2). */
  static HttpResponse<String> post(String path, String form) throws Exception {
    return send(signing(), SdkHttpMethod.POST, path, form);
  }

  static AwsSigning signing() {
    return AwsSigning.of(key.accessKeyId(), key.secretAccessKey(), Instant.now());
  }

  /** Sends what {@code signing} signed: method, path (and query), the form as the body if any. */
  static HttpResponse<String> send(
      AwsSigning signing, SdkHttpMethod method, String path, String form, String... headers)
      throws Exception {
    int q = path.indexOf('?');
    SdkHttpRequest.Builder request =
        SdkHttpRequest.builder()
            .method(method)
            .uri(
                URI.create(
                    "http://127.0.0.1:" + fx.api.port() + (q < 0 ? path : path.substring(0, q))));
    if (q >= 0) {
      for (String pair : path.substring(q + 1).split("&")) {
        String[] kv = pair.split("=", 2);
        request.appendRawQueryParameter(kv[0], kv[1]);
      }
    }
    if (form != null) {
      request.putHeader("Content-Type", "application/x-www-form-urlencoded; charset=utf-8");
    }
    for (int i = 0; i < headers.length; i += 2) {
      request.putHeader(headers[i], headers[i + 1]);
    }
    SdkHttpRequest signed = signing.signSdk(request.build(), form);
    HttpRequest.Builder send =
        HttpRequest.newBuilder(signed.getUri())
            .method(
                method.name(),
                form == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(form));
    for (Map.Entry<String, List<String>> h : signed.headers().entrySet()) {
      if (!SET_BY_CLIENT.contains(h.getKey().toLowerCase(Locale.ROOT))) {
        h.getValue().forEach(v -> send.header(h.getKey(), v));
      }
    }
    return HTTP.send(send.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The EC2 error code of an error response (asserting its shape). */
  static String errorCode(HttpResponse<String> r) {
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("text/xml"));
    assertThat(r.body())
        .startsWith("<?xml")
        .contains("<Response><Errors><Error><Code>")
        .contains("<RequestID>");
    return r.body().replaceAll("(?s).*<Code>([^<]*)</Code>.*", "$1");
  }

  @Test
  void anActionItDoesNotAnswerIsInvalidActionAndNamesThoseItDoes() throws Exception {
    HttpResponse<String> r = post("/", "Action=CreateVpc&Version=2016-11-15");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(errorCode(r)).isEqualTo("InvalidAction");
    assertThat(r.body()).contains("CreateVpc").contains("RunInstances");
    assertThat(errorCode(post("/", "Version=2016-11-15"))).isEqualTo("MissingAction");
  }

  @Test
  void aParameterTheActionDoesNotTakeIsUnknownParameter() throws Exception {
    HttpResponse<String> r =
        post(
            "/",
            "Action=RunInstances&Version=2016-11-15&InstanceType=x86-16c-64g&MinCount=1&MaxCount=1"
                + "&KeyName=mine");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(errorCode(r)).isEqualTo("UnknownParameter");
    assertThat(r.body()).contains("KeyName");
  }

  @Test
  void badValuesAreRefusedNamingTheParameterAndNothingLaunches() throws Exception {
    fx.registerMachines(1, ApiFixture.facts(16, 64), true);
    String run = "Action=RunInstances&Version=2016-11-15&InstanceType=x86-16c-64g";
    Map<String, String> refusals =
        Map.of(
            run + "&MaxCount=1",
            "MissingParameter",
            run + "&MinCount=0&MaxCount=1",
            "InvalidParameterValue",
            run + "&MinCount=2&MaxCount=1",
            "InvalidParameterValue",
            run + "&MinCount=one&MaxCount=1",
            "InvalidParameterValue",
            run + "&MinCount=1&MaxCount=1&UserData=%%%",
            "MalformedQueryString",
            run + "&MinCount=1&MaxCount=1&UserData=not-base64!",
            "InvalidParameterValue",
            run
                + "&MinCount=1&MaxCount=1&TagSpecification.1.ResourceType=instance"
                + "&TagSpecification.1.Tag.1.Key=has%20space&TagSpecification.1.Tag.1.Value=x",
            "InvalidParameterValue",
            run
                + "&MinCount=1&MaxCount=1&TagSpecification.1.ResourceType=volume"
                + "&TagSpecification.1.Tag.1.Key=k&TagSpecification.1.Tag.1.Value=x",
            "InvalidParameterValue",
            "Action=RunInstances&Version=2016-11-15&InstanceType=t2.nano&MinCount=1&MaxCount=1",
            "InvalidParameterValue",
            run + "&MinCount=1&MaxCount=1&MinCount=2",
            "InvalidParameterCombination");
    for (Map.Entry<String, String> refusal : refusals.entrySet()) {
      HttpResponse<String> r = post("/", refusal.getKey());
      assertThat(r.statusCode()).as(refusal.getKey()).isEqualTo(400);
      assertThat(errorCode(r)).as(refusal.getKey()).isEqualTo(refusal.getValue());
    }
    assertThat(fx.count("SELECT count(*) FROM instances")).isZero();
  }

  @Test
  void describeRefusesFiltersAndTokensItDoesNotKnow() throws Exception {
    String describe = "Action=DescribeInstances&Version=2016-11-15";
    assertThat(errorCode(post("/", describe + "&Filter.1.Name=vpc-id&Filter.1.Value.1=v")))
        .isEqualTo("InvalidParameterValue");
    assertThat(errorCode(post("/", describe + "&NextToken=abc")))
        .isEqualTo("InvalidParameterValue");
    assertThat(errorCode(post("/", describe + "&InstanceId.1=vol-123")))
        .isEqualTo("InvalidInstanceID.Malformed");
    assertThat(errorCode(post("/", describe + "&InstanceId.1=i-0123456789abcdef0")))
        .isEqualTo("InvalidInstanceID.NotFound");
    assertThat(errorCode(post("/", describe + "&MaxResults=4"))).isEqualTo("InvalidParameterValue");
  }

  @Test
  void aProjectHeaderNamingNoProjectIsABadValueNotAMissingInstance() throws Exception {
    String form = "Action=DescribeInstances&Version=2016-11-15";
    AwsBasicCredentials admin = Ec2TestClients.accessKey(fx, "admin", "default");
    AwsSigning operator =
        AwsSigning.of(admin.accessKeyId(), admin.secretAccessKey(), Instant.now());
    HttpResponse<String> r =
        send(operator, SdkHttpMethod.POST, "/", form, "WarmMetal-Project", "nowhere");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(errorCode(r)).isEqualTo("InvalidParameterValue");
    assertThat(r.body()).contains("nowhere");
    // A client's key acts in its own project only.
    HttpResponse<String> elsewhere =
        send(signing(), SdkHttpMethod.POST, "/", form, "WarmMetal-Project", "nowhere");
    assertThat(elsewhere.statusCode()).isEqualTo(403);
    assertThat(errorCode(elsewhere)).isEqualTo("UnauthorizedOperation");
  }

  @Test
  void theEc2PathAnswersToo() throws Exception {
    HttpResponse<String> r = post("/ec2", "Action=DescribeInstances&Version=2016-11-15");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body())
        .contains("<DescribeInstancesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">")
        .contains("<requestId>");
  }

  @Test
  void aPresignedGetOnTheEc2PathIsAnswered() throws Exception {
    HttpResponse<String> r =
        send(
            signing().presigned(Duration.ofMinutes(5)),
            SdkHttpMethod.GET,
            "/ec2?Action=DescribeAvailabilityZones&Version=2016-11-15",
            null);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(r.body()).contains("<DescribeAvailabilityZonesResponse");
  }

  @Test
  void aRequestNotSignedByItsKeyIsRefusedAsEc2RefusesIt() throws Exception {
    String form = "Action=DescribeInstances&Version=2016-11-15";
    AwsSigning wrongSecret = AwsSigning.of(key.accessKeyId(), "not-the-secret", Instant.now());
    HttpResponse<String> forged = send(wrongSecret, SdkHttpMethod.POST, "/", form);
    assertThat(forged.statusCode()).isEqualTo(403);
    assertThat(errorCode(forged)).isEqualTo("SignatureDoesNotMatch");
    AwsSigning unknown =
        AwsSigning.of("AKWMAAAAAAAAAAAAAAAA", key.secretAccessKey(), Instant.now());
    assertThat(errorCode(send(unknown, SdkHttpMethod.POST, "/", form))).isEqualTo("AuthFailure");
    AwsSigning stale =
        AwsSigning.of(
            key.accessKeyId(), key.secretAccessKey(), Instant.now().minus(Duration.ofHours(1)));
    assertThat(errorCode(send(stale, SdkHttpMethod.POST, "/", form))).isEqualTo("RequestExpired");
    HttpResponse<String> anonymous =
        HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + fx.api.port() + "/"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(anonymous.statusCode()).isEqualTo(401);
    assertThat(errorCode(anonymous)).isEqualTo("MissingAuthenticationToken");
  }

  @Test
  void theConsoleStillAnswersAGetOfTheRoot() throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + fx.api.port() + "/")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isNotEqualTo(401).isLessThan(500);
    assertThat(r.body()).doesNotContain("<Errors>");
  }

  @Test
  void garbageIsAlwaysAFourHundredInEc2sShape() throws Exception {
    for (String form :
        List.of(
            "Action=DescribeInstances&Filter.1.Name=tag:x",
            "Action=DescribeTags&Filter.1.Name=key&Filter.1.Value.1=%00",
            "Action=DescribeInstanceTypes&MaxResults=1000",
            "Action=CreateTags&ResourceId.1=i-0123456789abcdef0",
            "Action=DeleteTags",
            "Action=TerminateInstances",
            "Action=RunInstances&MinCount=99999999999&MaxCount=1&InstanceType=x",
            "Action=DescribeAvailabilityZones&ZoneName.1=nowhere",
            "Action=" + "A".repeat(5000),
            "%E0%A4%A=1",
            "Action=DescribeInstances&InstanceId.0=i-1&InstanceId.99999=i-2")) {
      HttpResponse<String> r = post("/", form);
      assertThat(r.statusCode()).as(form).isBetween(400, 499);
      assertThat(errorCode(r)).as(form).isNotBlank().isNotEqualTo("InternalError");
    }
  }
}
