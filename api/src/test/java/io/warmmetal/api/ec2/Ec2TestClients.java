package io.warmmetal.api.ec2;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.testing.ApiFixture;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.services.ec2.Ec2Client;

/** What the EC2 endpoint's tests drive it with: access keys and the AWS SDK's EC2 client. */
final class Ec2TestClients {
  private Ec2TestClients() {}

  /** A token's access key, as {@code POST /v1/tokens} answers it, once, with the token. */
  static AwsBasicCredentials accessKey(ApiFixture fx, String role, String project) {
    JsonObject token =
        fx.client
            .post(
                "/v1/tokens",
                ApiFixture.ADMIN,
                new JsonObject()
                    .put("name", "ec2-" + role)
                    .put("role", role)
                    .put("project", project))
            .body();
    return AwsBasicCredentials.create(
        token.getString("accessKeyId", token.getString("token")),
        token.getString("secretAccessKey", "TEMP"));
  }

  /** The SDK's EC2 client, its endpoint the API's base URL, signing with {@code key}. */
  static Ec2Client client(
      ApiFixture fx,
      AwsBasicCredentials key,
      Consumer<ClientOverrideConfiguration.Builder> config) {
    return Ec2Client.builder()
        .endpointOverride(URI.create("http://127.0.0.1:" + fx.api.port()))
        .region(Region.of("rack-region"))
        .credentialsProvider(StaticCredentialsProvider.create(key))
        .httpClient(UrlConnectionHttpClient.create())
        .overrideConfiguration(config)
        .build();
  }

  /**
   * A client whose SDK retries {@code maxAttempts} times with a short fixed backoff (the standard
   * strategy's retry conditions), counting each attempt it sends in {@code attempts}.
   */
  static Ec2Client retrying(
      ApiFixture fx, AwsBasicCredentials key, int maxAttempts, AtomicInteger attempts) {
    ExecutionInterceptor counter =
        new ExecutionInterceptor() {
          @Override
          public void beforeTransmission(
              Context.BeforeTransmission context, ExecutionAttributes attributes) {
            attempts.incrementAndGet();
          }
        };
    return client(
        fx,
        key,
        c ->
            c.addExecutionInterceptor(counter)
                .retryStrategy(
                    AwsRetryStrategy.standardRetryStrategy().toBuilder()
                        .maxAttempts(maxAttempts)
                        .backoffStrategy(BackoffStrategy.fixedDelay(Duration.ofMillis(20)))
                        .build()));
  }
}
