package io.warmmetal.api.auth;

import io.vertx.core.MultiMap;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4FamilyHttpSigner.AuthLocation;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;

/**
 * Requests signed by AWS's own SigV4 signer (the AWS SDK for Java v2), handed over as the server
 * receives them: the SDK's raw path and query, its headers, the body. {@code expires} null: signed
 * in the Authorization header; else pre-signed in the query, good that long.
 */
public record AwsSigning(
    String accessKeyId, String secret, String service, Instant at, Duration expires) {
  static final String HOST = "127.0.0.1";
  static final int PORT = 8080;

  public static AwsSigning of(String accessKeyId, String secret, Instant at) {
    return new AwsSigning(accessKeyId, secret, "ec2", at, null);
  }

  AwsSigning service(String other) {
    return new AwsSigning(accessKeyId, secret, other, at, expires);
  }

  AwsSigning at(Instant other) {
    return new AwsSigning(accessKeyId, secret, service, other, expires);
  }

  public AwsSigning presigned(Duration goodFor) {
    return new AwsSigning(accessKeyId, secret, service, at, goodFor);
  }

  /** An SDK request to this host: {@code encodedPath} as it goes on the wire. */
  static SdkHttpRequest.Builder request(SdkHttpMethod method, String encodedPath) {
    return request(method, PORT, encodedPath);
  }

  static SdkHttpRequest.Builder request(SdkHttpMethod method, int port, String encodedPath) {
    return SdkHttpRequest.builder()
        .method(method)
        .protocol("http")
        .host(HOST)
        .port(port)
        .encodedPath(encodedPath);
  }

  /** {@code request} (with {@code body}, if not null) as the SDK signs it, to send as it is. */
  public SdkHttpRequest signSdk(SdkHttpRequest request, String body) {
    return AwsV4HttpSigner.create()
        .sign(
            r -> {
              r.identity(AwsCredentialsIdentity.create(accessKeyId, secret))
                  .request(request)
                  .putProperty(AwsV4HttpSigner.REGION_NAME, "eu-west-3")
                  .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, service)
                  .putProperty(AwsV4HttpSigner.SIGNING_CLOCK, Clock.fixed(at, ZoneOffset.UTC));
              if (body != null) {
                r.payload(ContentStreamProvider.fromUtf8String(body));
              }
              if (expires != null) {
                r.putProperty(AwsV4HttpSigner.AUTH_LOCATION, AuthLocation.QUERY_STRING)
                    .putProperty(AwsV4HttpSigner.EXPIRATION_DURATION, expires);
              }
            })
        .request();
  }

  /** An EC2 Query POST: its parameters form-encoded in the body. */
  SignedRequest postForm(String encodedPath, String form) {
    return sign(
        request(SdkHttpMethod.POST, encodedPath)
            .putHeader("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
            .build(),
        form);
  }

  SignedRequest sign(SdkHttpRequest request, String body) {
    SdkHttpRequest signed = signSdk(request, body);
    MultiMap headers = MultiMap.caseInsensitiveMultiMap();
    signed.headers().forEach((name, values) -> values.forEach(v -> headers.add(name, v)));
    URI uri = signed.getUri();
    return new SignedRequest(
        signed.method().name(),
        uri.getRawPath(),
        uri.getRawQuery(),
        headers,
        body == null ? null : body.getBytes(StandardCharsets.UTF_8));
  }
}
