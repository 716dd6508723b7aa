package io.warmmetal.api.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.MultiMap;
import io.warmmetal.api.auth.SignatureFailure.Code;
import io.warmmetal.api.crypto.Ids;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.http.SdkHttpMethod;

/**
 * SigV4 against AWS's own signer (the AWS SDK for Java v2) and AWS's published test suite: what AWS
 * signs is accepted, and every kind of refusal has its EC2 code.
 */
class SigV4Test {
  private static final String EC2 = "ec2";
  private static final String KEY = "AKWMTESTKEY234567ABC";
  private static final String SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  private static final Instant NOW = Instant.parse("2026-12-03T09:00:00Z");
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
  private static final AwsSigning AWS = AwsSigning.of(KEY, SECRET, NOW);
  private static final String FORM =
      "Action=DescribeInstances&Version=2016-11-15&InstanceId.1=i-0123456789abcdef0";

  /** What AccessKeys does, once it has the key's secret. */
  private static SigV4.Claim verify(SignedRequest request, String secret, Clock clock) {
    SigV4.Claim claim = SigV4.parse(request);
    SigV4.check(claim, EC2, clock);
    SigV4.verify(request, claim, secret);
    return claim;
  }

  private static SigV4.Claim accepted(SignedRequest request) {
    return verify(request, SECRET, CLOCK);
  }

  private static void refused(SignedRequest request, String code) {
    refused(request, SECRET, CLOCK, code);
  }

  private static void refused(SignedRequest request, String secret, Clock clock, String code) {
    assertThatThrownBy(() -> verify(request, secret, clock))
        .isInstanceOfSatisfying(
            SignatureFailure.class,
            f -> {
              assertThat(f.code()).as(f.getMessage()).isEqualTo(code);
              assertThat(f.getMessage()).doesNotContain(SECRET, secret);
            });
  }

  private static SignedRequest withHeader(SignedRequest r, String name, String value) {
    MultiMap headers = MultiMap.caseInsensitiveMultiMap().addAll(r.headers()).set(name, value);
    return new SignedRequest(r.method(), r.rawPath(), r.rawQuery(), headers, r.body());
  }

  private static SignedRequest withBody(SignedRequest r, String body) {
    return new SignedRequest(
        r.method(), r.rawPath(), r.rawQuery(), r.headers(), body.getBytes(StandardCharsets.UTF_8));
  }

  private static SignedRequest withQuery(SignedRequest r, String rawQuery) {
    return new SignedRequest(r.method(), r.rawPath(), rawQuery, r.headers(), r.body());
  }

  private static SignedRequest describeGet(AwsSigning signer, String encodedPath) {
    return signer.sign(
        AwsSigning.request(SdkHttpMethod.GET, encodedPath)
            .putRawQueryParameter("Action", "DescribeInstances")
            .putRawQueryParameter("Version", "2016-11-15")
            .build(),
        null);
  }

  @Nested
  class WhatAwsSignsIsAccepted {
    @Test
    void aFormPostSignedInItsHeaders() {
      SigV4.Claim claim = accepted(AWS.postForm("/", FORM));
      assertThat(claim.accessKeyId()).isEqualTo(KEY);
      assertThat(claim.region()).isEqualTo("eu-west-3");
      assertThat(claim.service()).isEqualTo("ec2");
      assertThat(claim.presigned()).isFalse();
      accepted(AWS.postForm("/ec2/", FORM));
    }

    @Test
    void aGetWithItsParametersInTheQuery() {
      SignedRequest r =
          AWS.sign(
              AwsSigning.request(SdkHttpMethod.GET, "/ec2/")
                  .putRawQueryParameter("Version", "2016-11-15")
                  .putRawQueryParameter("Action", "DescribeInstances")
                  .putRawQueryParameter("Filter.1.Name", "tag:Name")
                  .appendRawQueryParameter("Filter.1.Value.1", "a b+c/ü~*'()!")
                  .appendRawQueryParameter("Filter.1.Value.2", "")
                  .putRawQueryParameter("InstanceId", List.of("i-2", "i-1"))
                  .build(),
              null);
      assertThat(r.rawQuery()).contains("Filter.1.Name=tag%3AName");
      accepted(r);
    }

    @ParameterizedTest
    @ValueSource(
        strings = {
          "/",
          "/ec2",
          "/ec2/",
          "/ec2/a%20b/%C3%BC/",
          "/ec2/$!*'()+,;=:@~",
          "/ec2/%2F%25/x",
          "/ec2/./a/../b/",
          "/ec2/a%2Fb/..",
        })
    void atPathsWithAPrefixAndOddCharacters(String encodedPath) {
      SignedRequest r = describeGet(AWS, encodedPath);
      assertThat(r.rawPath()).isEqualTo(encodedPath);
      accepted(r);
    }

    @Test
    void preSignedGet() {
      SignedRequest r = describeGet(AWS.presigned(Duration.ofMinutes(5)), "/ec2/");
      assertThat(r.headers().contains("Authorization")).isFalse();
      assertThat(r.rawQuery()).contains("X-Amz-Signature=", "Action=DescribeInstances");
      SigV4.Claim claim = accepted(r);
      assertThat(claim.presigned()).isTrue();
      assertThat(claim.expiresSeconds()).isEqualTo(300);
    }

    @Test
    void preSignedFormPostWithItsBodySigned() {
      accepted(AWS.presigned(Duration.ofMinutes(5)).postForm("/ec2/", FORM));
    }

    @Test
    void preSignedAnHourAgoForTwo() {
      accepted(
          describeGet(
              AWS.at(NOW.minus(Duration.ofHours(1))).presigned(Duration.ofHours(2)), "/ec2/"));
    }

    @Test
    void withinTheClockSkew() {
      accepted(AWS.at(NOW.minus(Duration.ofMinutes(14))).postForm("/", FORM));
      accepted(AWS.at(NOW.plus(Duration.ofMinutes(14))).postForm("/", FORM));
    }

    @Test
    void anUnsignedHeaderAddedOnTheWayIsFine() {
      SignedRequest r = AWS.postForm("/", FORM);
      assertThat(r.headers().contains("X-Forwarded-For")).isFalse();
      accepted(withHeader(withHeader(r, "X-Forwarded-For", "192.0.2.1"), "Via", "1.1 proxy"));
    }

    @Test
    void signedHeaderValuesAreTrimmedAndTheirInnerSpacesCollapsed() {
      SignedRequest r =
          AWS.sign(
              AwsSigning.request(SdkHttpMethod.POST, "/")
                  .putHeader("Content-Type", "application/x-www-form-urlencoded")
                  .putHeader("X-Custom", "a b c")
                  .build(),
              FORM);
      accepted(withHeader(r, "X-Custom", "  a   b \t c "));
      refused(withHeader(r, "X-Custom", "a bc"), "SignatureDoesNotMatch");
    }
  }

  @Nested
  class Refusals {
    @Test
    void aTamperedBody() {
      SignedRequest r = AWS.postForm("/", FORM);
      refused(
          withBody(r, FORM.replace("DescribeInstances", "TerminateInstances")),
          "SignatureDoesNotMatch");
    }

    @Test
    void aBodyThatIsNotTheOneItsContentHashNames() {
      SignedRequest r = AWS.postForm("/", FORM);
      String otherHash = "0".repeat(64);
      refused(withHeader(r, "X-Amz-Content-Sha256", otherHash), "SignatureDoesNotMatch");
    }

    @Test
    void aTamperedSignedHeader() {
      SignedRequest r = AWS.postForm("/", FORM);
      refused(withHeader(r, "Content-Type", "text/plain"), "SignatureDoesNotMatch");
      refused(withHeader(r, "Host", "127.0.0.1:9999"), "SignatureDoesNotMatch");
    }

    @Test
    void aTamperedQueryOrPath() {
      SignedRequest get = describeGet(AWS, "/ec2/");
      refused(
          withQuery(get, get.rawQuery().replace("DescribeInstances", "TerminateInstances")),
          "SignatureDoesNotMatch");
      refused(withQuery(get, get.rawQuery() + "&Force=true"), "SignatureDoesNotMatch");
      refused(
          new SignedRequest("GET", "/ec2/x", get.rawQuery(), get.headers(), null),
          "SignatureDoesNotMatch");
      refused(
          new SignedRequest("DELETE", "/ec2/", get.rawQuery(), get.headers(), null),
          "SignatureDoesNotMatch");
      SignedRequest presigned = describeGet(AWS.presigned(Duration.ofMinutes(5)), "/ec2/");
      refused(
          withQuery(presigned, presigned.rawQuery().replace("DescribeInstances", "RunInstances")),
          "SignatureDoesNotMatch");
    }

    @Test
    void theWrongSecret() {
      refused(
          AWS.postForm("/", FORM),
          "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEZ",
          CLOCK,
          "SignatureDoesNotMatch");
      refused(
          AwsSigning.of(KEY, "another-secret-of-forty-characters-000000", NOW).postForm("/", FORM),
          "SignatureDoesNotMatch");
    }

    @Test
    void anotherService() {
      SignedRequest r = AWS.service("sts").postForm("/", FORM);
      refused(r, "SignatureDoesNotMatch");
      assertThatThrownBy(() -> accepted(r)).hasMessageContaining("'ec2'");
    }

    @Test
    void aDateOutsideTheClockSkew() {
      refused(AWS.at(NOW.minus(Duration.ofMinutes(16))).postForm("/", FORM), "RequestExpired");
      refused(AWS.at(NOW.plus(Duration.ofMinutes(16))).postForm("/", FORM), "RequestExpired");
      SignedRequest r = AWS.postForm("/", FORM);
      refused(r, SECRET, Clock.offset(CLOCK, SigV4.MAX_SKEW.plusSeconds(1)), "RequestExpired");
      assertThatCode(() -> verify(r, SECRET, Clock.offset(CLOCK, SigV4.MAX_SKEW)))
          .doesNotThrowAnyException();
    }

    @Test
    void anExpiredPreSignedUrl() {
      AwsSigning fiveMinutes = AWS.presigned(Duration.ofMinutes(5));
      refused(describeGet(fiveMinutes.at(NOW.minus(Duration.ofMinutes(6))), "/"), "RequestExpired");
      SignedRequest r = describeGet(fiveMinutes, "/");
      refused(r, SECRET, Clock.offset(CLOCK, Duration.ofSeconds(301)), "RequestExpired");
      assertThatCode(() -> verify(r, SECRET, Clock.offset(CLOCK, Duration.ofSeconds(300))))
          .doesNotThrowAnyException();
      // Dated ahead of the clock: within the skew, as a signed header would be, and no further.
      refused(describeGet(fiveMinutes.at(NOW.plus(Duration.ofMinutes(16))), "/"), "RequestExpired");
    }

    @ParameterizedTest
    @ValueSource(strings = {"604801", "0", "-5", "300s", "99999999"})
    void expiresBeyondSevenDaysOrNotSeconds(String expires) {
      SignedRequest r = describeGet(AWS.presigned(Duration.ofMinutes(5)), "/");
      refused(
          withQuery(r, r.rawQuery().replace("X-Amz-Expires=300", "X-Amz-Expires=" + expires)),
          "InvalidParameterValue");
    }

    @ParameterizedTest
    @ValueSource(
        strings = {
          "AWS4-HMAC-SHA256",
          "AWS4-HMAC-SHA256 ",
          "AWS4-HMAC-SHA256 Credential=%s, SignedHeaders=%s",
          "AWS4-HMAC-SHA256 Credential=%s, Signature=%3$s",
          "AWS4-HMAC-SHA256 SignedHeaders=%2$s, Signature=%3$s",
          "AWS4-HMAC-SHA256 Credential=%s, SignedHeaders=%s, Signature=%s, Signature=%3$s",
          "AWS4-HMAC-SHA256 Credential=%s SignedHeaders=%s Signature=%s",
          "AWS4-HMAC-SHA512 Credential=%s, SignedHeaders=%s, Signature=%s",
          "AWS4-HMAC-SHA256 Credential=AKWMTESTKEY234567ABC/20261203/eu-west-3/ec2,"
              + " SignedHeaders=%2$s, Signature=%3$s",
          "AWS4-HMAC-SHA256 Credential=/20261203/eu-west-3/ec2/aws4_request,"
              + " SignedHeaders=%2$s, Signature=%3$s",
          "AWS4-HMAC-SHA256 Credential=%s, SignedHeaders=Host;X-Amz-Date, Signature=%3$s",
          "AWS4-HMAC-SHA256 Credential=%s, SignedHeaders=x-amz-date;host, Signature=%3$s",
          "AWS4-HMAC-SHA256 Credential=%s, SignedHeaders=host;;x-amz-date, Signature=%3$s",
          "AWS4-HMAC-SHA256 Credential=%s, SignedHeaders=content-type;x-amz-date, Signature=%3$s",
          "AWS4-HMAC-SHA256 Credential=%s, SignedHeaders=%s, Signature=abc123",
          "AWS4-HMAC-SHA256 Credential=%s, SignedHeaders=%s, Signature=%S",
          "Bearer wm_notASigV4SignatureButABearerSecret",
          "Basic Ym9vdDpzZWNyZXQ=",
        })
    void aMalformedAuthorizationHeader(String template) {
      SignedRequest r = AWS.postForm("/", FORM);
      String header = r.headers().get("Authorization");
      String credential = header.replaceAll(".*Credential=([^,]*),.*", "$1");
      String signedHeaders = header.replaceAll(".*SignedHeaders=([^,]*),.*", "$1");
      String signature = header.replaceAll(".*Signature=(\\w+).*", "$1");
      String malformed = String.format(template, credential, signedHeaders, signature);
      assertThatThrownBy(() -> accepted(withHeader(r, "Authorization", malformed)))
          .isInstanceOfSatisfying(
              SignatureFailure.class,
              f -> {
                assertThat(f.code()).as(malformed).isEqualTo("IncompleteSignature");
                assertThat(f.status()).isEqualTo(400);
                assertThat(f.getMessage()).doesNotContain("wm_", "Ym9vd");
              });
    }

    @Test
    void noXAmzDateOrAMalformedOne() {
      SignedRequest r = AWS.postForm("/", FORM);
      MultiMap headers = MultiMap.caseInsensitiveMultiMap().addAll(r.headers());
      headers.remove("X-Amz-Date");
      refused(
          new SignedRequest(r.method(), r.rawPath(), r.rawQuery(), headers, r.body()),
          "IncompleteSignature");
      refused(withHeader(r, "X-Amz-Date", "2026-12-03T09:00:00Z"), "IncompleteSignature");
      refused(withHeader(r, "X-Amz-Date", "20261332T090000Z"), "IncompleteSignature");
    }

    @Test
    void aCredentialDatedAnotherDayThanXAmzDate() {
      SignedRequest r = AWS.postForm("/", FORM);
      String header = r.headers().get("Authorization").replace("/20261203/", "/20261202/");
      refused(withHeader(r, "Authorization", header), "SignatureDoesNotMatch");
      String terminator = r.headers().get("Authorization").replace("/aws4_request", "/aws5");
      refused(withHeader(r, "Authorization", terminator), "SignatureDoesNotMatch");
    }

    @Test
    void noSignatureAtAll() {
      SignedRequest r =
          new SignedRequest(
              "GET",
              "/ec2/",
              "Action=DescribeInstances&Version=2016-11-15",
              MultiMap.caseInsensitiveMultiMap().add("Host", "127.0.0.1:8080"),
              null);
      refused(r, "MissingAuthenticationToken");
      assertThatThrownBy(() -> accepted(r))
          .isInstanceOfSatisfying(
              SignatureFailure.class, f -> assertThat(f.status()).isEqualTo(401));
      refused(withQuery(r, null), "MissingAuthenticationToken");
    }

    @Test
    void aPreSignedQueryMissingAPart() {
      SignedRequest r = describeGet(AWS.presigned(Duration.ofMinutes(5)), "/");
      refused(
          withQuery(r, r.rawQuery().replaceAll("X-Amz-SignedHeaders=[^&]*&?", "")),
          "IncompleteSignature");
      refused(
          withQuery(r, r.rawQuery().replace("AWS4-HMAC-SHA256", "AWS4-HMAC-SHA1")),
          "IncompleteSignature");
      refused(withQuery(r, r.rawQuery() + "&X-Amz-Date=20261203T090000Z"), "IncompleteSignature");
    }

    @Test
    void signedBothWays() {
      SignedRequest presigned = describeGet(AWS.presigned(Duration.ofMinutes(5)), "/");
      String header = AWS.postForm("/", FORM).headers().get("Authorization");
      refused(withHeader(presigned, "Authorization", header), "IncompleteSignature");
    }

    @Test
    void aSessionToken() {
      refused(
          withHeader(AWS.postForm("/", FORM), "X-Amz-Security-Token", "FQoGZXIvYXdzE"),
          "InvalidParameterValue");
      SignedRequest r = describeGet(AWS.presigned(Duration.ofMinutes(5)), "/");
      refused(
          withQuery(r, r.rawQuery() + "&X-Amz-Security-Token=FQoGZXIvYXdzE"),
          "InvalidParameterValue");
    }

    @Test
    void anUnsignedPayloadOutsideAPreSignedUrlWithoutBody() {
      refused(
          withHeader(AWS.postForm("/", FORM), "X-Amz-Content-Sha256", SigV4.UNSIGNED_PAYLOAD),
          "IncompleteSignature");
      SignedRequest presignedPost = AWS.presigned(Duration.ofMinutes(5)).postForm("/", FORM);
      refused(
          withHeader(presignedPost, "X-Amz-Content-Sha256", SigV4.UNSIGNED_PAYLOAD),
          "IncompleteSignature");
    }

    @ParameterizedTest
    @CsvSource({
      "MissingAuthenticationToken, 401",
      "IncompleteSignature, 400",
      "AuthFailure, 401",
      "SignatureDoesNotMatch, 403",
      "RequestExpired, 400",
      "InvalidParameterValue, 400"
    })
    void eachCodeHasEc2sStatus(Code code, int status) {
      SignatureFailure f = new SignatureFailure(code, "m");
      assertThat(f.code()).isEqualTo(code.name());
      assertThat(f.status()).isEqualTo(status);
    }
  }

  /**
   * AWS's SigV4 test suite (aws-sig-v4-test-suite: AKIDEXAMPLE, 20150830T123600Z, us-east-1,
   * service {@code service}): the canonical request, the string to sign and the signature,
   * character for character.
   */
  @Nested
  class AwsTestSuite {
    private static final String SUITE_SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    private static final Clock SUITE_CLOCK =
        Clock.fixed(Instant.parse("2015-08-30T12:36:00Z"), ZoneOffset.UTC);
    private static final String SCOPE = "AKIDEXAMPLE/20150830/us-east-1/service/aws4_request";

    /**
     * Checks a suite case: its request (signed {@code signature} over {@code signedHeaders}), the
     * payload hash, and the suite's canonical request and string to sign.
     */
    private void matches(
        String method,
        MultiMap headers,
        String body,
        String signedHeaders,
        String signature,
        String creq,
        String sts) {
      headers
          .add("Host", "example.amazonaws.com")
          .add("X-Amz-Date", "20150830T123600Z")
          .add(
              "Authorization",
              "AWS4-HMAC-SHA256 Credential="
                  + SCOPE
                  + ", SignedHeaders="
                  + signedHeaders
                  + ", Signature="
                  + signature);
      SignedRequest r =
          new SignedRequest(method, "/", null, headers, body.getBytes(StandardCharsets.UTF_8));
      SigV4.Claim claim = SigV4.parse(r);
      String payloadHash = creq.substring(creq.lastIndexOf('\n') + 1);
      assertThat(payloadHash).isEqualTo(HexFormat.of().formatHex(Ids.sha256(body)));
      assertThat(SigV4.canonicalRequest(r, claim, payloadHash)).isEqualTo(creq);
      assertThat(SigV4.stringToSign(claim, creq)).isEqualTo(sts);
      byte[] key = SigV4.signingKey(SUITE_SECRET, "20150830", "us-east-1", "service");
      assertThat(SigV4.signature(key, sts)).isEqualTo(signature);
      SigV4.check(claim, "service", SUITE_CLOCK);
      SigV4.verify(r, claim, SUITE_SECRET);
      // The suite's service is not this server's.
      assertThatThrownBy(() -> SigV4.check(claim, EC2, SUITE_CLOCK))
          .isInstanceOfSatisfying(
              SignatureFailure.class, f -> assertThat(f.code()).isEqualTo("SignatureDoesNotMatch"));
    }

    @Test
    void getVanilla() {
      matches(
          "GET",
          MultiMap.caseInsensitiveMultiMap(),
          "",
          "host;x-amz-date",
          "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
          "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
              + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
          "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
              + "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
    }

    @Test
    void postXWwwFormUrlencoded() {
      matches(
          "POST",
          MultiMap.caseInsensitiveMultiMap()
              .add("Content-Type", "application/x-www-form-urlencoded"),
          "Param1=value1",
          "content-type;host;x-amz-date",
          "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
          "POST\n/\n\ncontent-type:application/x-www-form-urlencoded\nhost:example.amazonaws.com\n"
              + "x-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n"
              + "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
          "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
              + "42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281");
    }
  }

  /** The canonical path and query, as AWS's signers for services other than S3 make them. */
  @Nested
  class Canonical {
    @ParameterizedTest
    @CsvSource(
        delimiter = '|',
        value = {
          "/|/",
          "''|/",
          "//example//|/example/",
          "/example/..|/",
          "/./|/",
          "/./example|/example",
          "/a/b/../../..|/",
          "/ec2/a%2Fb|/ec2/a%252Fb",
          "/ec2/a%20b/|/ec2/a%2520b/",
          "/$!*'()+,;=:@~|/%24%21%2A%27%28%29%2B%2C%3B%3D%3A%40~",
          "/ü|/%C3%BC",
        })
    void uri(String rawPath, String canonical) {
      assertThat(SigV4.canonicalUri(rawPath)).isEqualTo(canonical);
    }

    @ParameterizedTest
    @CsvSource(
        delimiter = '|',
        value = {
          "Param2=value2&Param1=value1|Param1=value1&Param2=value2",
          "a=1&a=0&B=2|B=2&a=0&a=1",
          "p|p=",
          "p=&&q=|p=&q=",
          "x=a+b|x=a%2Bb",
          "x=a%20b|x=a%20b",
          "x=%7e%2f%2F|x=~%2F%2F",
          "x=%zz|x=%25zz",
          "%C3%BC=%E2%82%AC|%C3%BC=%E2%82%AC",
          "Action=DescribeInstances&X-Amz-Signature=ab|Action=DescribeInstances",
        })
    void queryOfAPreSignedUrl(String rawQuery, String canonical) {
      assertThat(SigV4.canonicalQuery(rawQuery, true)).isEqualTo(canonical);
    }

    @Test
    void aSignedHeaderQueryKeepsAnXAmzSignatureParameter() {
      assertThat(SigV4.canonicalQuery("X-Amz-Signature=ab", false)).isEqualTo("X-Amz-Signature=ab");
      assertThat(SigV4.canonicalQuery(null, false)).isEmpty();
    }
  }
}
