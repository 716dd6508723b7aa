package io.warmmetal.api.instances;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Many launches at once against few machines: no machine handed out twice, no launch waiting on
 * another.
 */
@ExtendWith(VertxExtension.class)
class ConcurrentLaunchTest {
  private static ApiFixture fx;

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
  }

  @AfterAll
  static void stop() {
    fx.close();
  }

  @Test
  void fiveHundredConcurrentLaunchesOnTwoHundredMachines() {
    fx.registerMachines(200, ApiFixture.facts(16, 64), true);
    String client = fx.token("client");

    List<Future<Response>> launches = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      launches.add(
          fx.client.send(
              HttpMethod.POST,
              "/v1/instances",
              client,
              new JsonObject()
                  .put("shape", "x86-16c-64g")
                  .put("labels", new JsonObject().put("n", "l" + i))));
    }
    Future.all(launches).await();

    Set<String> machines = new HashSet<>();
    Set<String> instances = new HashSet<>();
    int launched = 0;
    int refused = 0;
    for (Future<Response> f : launches) {
      Response r = f.result();
      if (r.status() == 201) {
        launched++;
        JsonObject instance = r.body().getJsonArray("instances").getJsonObject(0);
        assertThat(machines.add(instance.getString("machineId")))
            .as("machine handed out twice")
            .isTrue();
        instances.add(instance.getString("id"));
      } else {
        assertThat(r.status()).isEqualTo(503);
        assertThat(r.errorCode()).isEqualTo("InsufficientCapacity");
        refused++;
      }
    }
    assertThat(launched).isEqualTo(200);
    assertThat(refused).isEqualTo(300);
    assertThat(instances).hasSize(200);
    // The database agrees: every machine bound to exactly one pending instance, one join queued for
    // each.
    assertThat(
            fx.count(
                "SELECT count(*) FROM machines WHERE state = 'joining' AND instance_id IS NOT NULL"))
        .isEqualTo(200);
    assertThat(fx.count("SELECT count(DISTINCT machine_id) FROM instances WHERE state = 'pending'"))
        .isEqualTo(200);
    assertThat(fx.count("SELECT count(*) FROM commands WHERE type = 'join' AND status = 'queued'"))
        .isEqualTo(200);
    assertThat(fx.count("SELECT count(*) FROM launches")).isEqualTo(200);
  }
}
