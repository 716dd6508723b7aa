package io.warmmetal.api.ec2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.TestDatabase;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Ec2Exception;

/**
 * The database goes away under the EC2 endpoint: the SDK's own retry logic meets 503 Unavailable
 * with a Retry-After (never "no capacity", never a 500), and the same call succeeds once it is
 * back.
 */
@ExtendWith(VertxExtension.class)
class Ec2OutageTest {
  private TestDatabase.Proxied db;
  private ApiFixture fx;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    db = TestDatabase.freshDatabaseBehindProxy(vertx);
    fx = ApiFixture.start(vertx, Map.of("WARMMETAL_DATABASE_URL", db.url()));
  }

  @AfterEach
  void stop() {
    fx.close();
    db.proxy().close();
  }

  @Test
  void anOutageIsUnavailableWhichTheSdkRetriesAndTheSameCallSucceedsAfter() {
    fx.registerMachines(1, ApiFixture.facts(16, 64), true);
    AtomicInteger attempts = new AtomicInteger();
    try (Ec2Client ec2 =
        Ec2TestClients.retrying(
            fx, Ec2TestClients.accessKey(fx, "client", "default"), 2, attempts)) {
      // The access key is checked once while the database is there (it is looked up each time).
      assertThat(ec2.describeInstances().reservations()).isEmpty();
      attempts.set(0);
      db.proxy().cut();
      try {
        assertThatThrownBy(
                () -> ec2.runInstances(r -> r.instanceType("x86-16c-64g").minCount(1).maxCount(1)))
            .isInstanceOfSatisfying(
                Ec2Exception.class,
                e -> {
                  assertThat(e.statusCode()).isEqualTo(503);
                  assertThat(e.awsErrorDetails().errorCode()).isEqualTo("Unavailable");
                  assertThat(
                          e.awsErrorDetails().sdkHttpResponse().firstMatchingHeader("Retry-After"))
                      .isPresent();
                });
        assertThat(attempts.get()).as("the SDK retried the 503").isEqualTo(2);
      } finally {
        db.proxy().restore();
      }
      assertThat(
              ec2.runInstances(r -> r.instanceType("x86-16c-64g").minCount(1).maxCount(1))
                  .instances())
          .hasSize(1);
    }
  }
}
