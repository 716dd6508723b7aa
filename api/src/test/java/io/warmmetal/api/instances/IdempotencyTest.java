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
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * EC2's clientToken: a retry never launches twice; the same token with other parameters is refused.
 */
@ExtendWith(VertxExtension.class)
class IdempotencyTest {
  private ApiFixture fx;
  private String client;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
    client = fx.token("client");
    fx.registerMachines(10, ApiFixture.facts(8, 32), true);
  }

  @AfterEach
  void stop() {
    fx.close();
  }

  private static JsonObject request(String token) {
    return new JsonObject()
        .put("shape", "x86-8c-32g")
        .put("minCount", 2)
        .put("clientToken", token)
        .put("labels", new JsonObject().put("a", "1").put("b", "2"));
  }

  @Test
  void sameTokenSameParametersReturnsTheSameInstances() {
    Response first = fx.client.post("/v1/instances", client, request("tok-1"));
    // Same parameters with labels in another key order: still the same request.
    JsonObject reordered =
        new JsonObject()
            .put("labels", new JsonObject().put("b", "2").put("a", "1"))
            .put("clientToken", "tok-1")
            .put("minCount", 2)
            .put("shape", "x86-8c-32g");
    Response retry = fx.client.post("/v1/instances", client, reordered);
    assertThat(first.status()).isEqualTo(201);
    assertThat(retry.status()).isEqualTo(200);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(2);
  }

  @Test
  void tokensWithUnpairedSurrogatesAreRefusedRatherThanFoldedIntoOne() {
    // Stored as UTF-8 such halves would all become '?': three different tokens, one launch.
    for (String token : new String[] {"\\ud800abc", "\\udfffabc", "x\\uDBFF"}) {
      Response r =
          fx.client.call(
              HttpMethod.POST,
              "/v1/instances",
              client,
              "{\"shape\": \"x86-8c-32g\", \"clientToken\": \"" + token + "\"}");
      assertThat(r.status()).as(token).isEqualTo(400);
      assertThat(r.body().getString("message")).contains("surrogate");
    }
    // A whole pair (an emoji) is fine.
    assertThat(
            fx.client
                .call(
                    HttpMethod.POST,
                    "/v1/instances",
                    client,
                    "{\"shape\": \"x86-8c-32g\", \"clientToken\": \"tok-\\ud83d\\ude80\"}")
                .status())
        .isEqualTo(201);
    assertThat(fx.count("SELECT count(*) FROM launches")).isEqualTo(1);
  }

  @Test
  void sameTokenOtherParametersIsAMismatchAndLaunchesNothing() {
    fx.client.post("/v1/instances", client, request("tok-2"));
    Response other = fx.client.post("/v1/instances", client, request("tok-2").put("minCount", 3));
    assertThat(other.status()).isEqualTo(409);
    assertThat(other.errorCode()).isEqualTo("IdempotentParameterMismatch");
    assertThat(other.body().getString("field")).isEqualTo("clientToken");
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(2);
  }

  @Test
  void machineLabelsArePartOfTheRequest() {
    JsonObject rack1 =
        new JsonObject().put("topology.kubernetes.io/zone", "rack-1").put("disk", "nvme");
    List<String> rack1Machines = fx.registerMachines(2, ApiFixture.facts(8, 32), true, rack1);
    Response first =
        fx.client.post("/v1/instances", client, request("tok-5").put("machineLabels", rack1));
    assertThat(first.status()).isEqualTo(201);
    assertThat(
            first.body().getJsonArray("instances").stream()
                .map(i -> ((JsonObject) i).getString("machineId")))
        .containsExactlyInAnyOrderElementsOf(rack1Machines);
    // The same labels in another key order: the same request, the same instances.
    Response retry =
        fx.client.post(
            "/v1/instances",
            client,
            request("tok-5")
                .put(
                    "machineLabels",
                    new JsonObject()
                        .put("disk", "nvme")
                        .put("topology.kubernetes.io/zone", "rack-1")));
    assertThat(retry.status()).isEqualTo(200);
    assertThat(retry.body()).isEqualTo(first.body());
    // Other labels, fewer labels, none: other requests.
    for (JsonObject other :
        new JsonObject[] {
          request("tok-5").put("machineLabels", rack1.copy().put("disk", "hdd")),
          request("tok-5").put("machineLabels", new JsonObject().put("disk", "nvme")),
          request("tok-5")
        }) {
      Response mismatch = fx.client.post("/v1/instances", client, other);
      assertThat(mismatch.status()).as(other.encode()).isEqualTo(409);
      assertThat(mismatch.errorCode()).isEqualTo("IdempotentParameterMismatch");
    }
    // A token first used without machineLabels: empty machineLabels is the same request (no
    // filter), any is not.
    assertThat(fx.client.post("/v1/instances", client, request("tok-6")).status()).isEqualTo(201);
    assertThat(
            fx.client
                .post(
                    "/v1/instances",
                    client,
                    request("tok-6").put("machineLabels", new JsonObject()))
                .status())
        .isEqualTo(200);
    assertThat(
            fx.client
                .post("/v1/instances", client, request("tok-6").put("machineLabels", rack1))
                .status())
        .isEqualTo(409);
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(4);
  }

  @Test
  void concurrentRetriesOfOneTokenLaunchOnce() {
    List<Future<Response>> retries = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      retries.add(fx.client.send(HttpMethod.POST, "/v1/instances", client, request("tok-3")));
    }
    Future.all(retries).await();
    Set<String> launchIds =
        retries.stream()
            .map(f -> f.result().body().getString("launchId"))
            .collect(Collectors.toSet());
    assertThat(launchIds).hasSize(1);
    assertThat(retries.stream().filter(f -> f.result().status() == 201)).hasSize(1);
    assertThat(retries.stream().filter(f -> f.result().status() == 200)).hasSize(24);
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(2);
    assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'joining'")).isEqualTo(2);
  }

  /**
   * As EC2's are the account's: another token of the project gets the same launch (TenancyTest:
   * projects).
   */
  @Test
  void tokensArePerProjectNotPerCaller() {
    String otherClient = fx.token("client");
    Response mine = fx.client.post("/v1/instances", client, request("shared"));
    Response theirs = fx.client.post("/v1/instances", otherClient, request("shared"));
    assertThat(mine.status()).isEqualTo(201);
    assertThat(theirs.status()).isEqualTo(200);
    assertThat(theirs.body().getString("launchId")).isEqualTo(mine.body().getString("launchId"));
  }

  @Test
  void aRefusedLaunchDoesNotUseUpItsToken() {
    JsonObject big =
        new JsonObject().put("shape", "x86-8c-32g").put("minCount", 11).put("clientToken", "tok-4");
    assertThat(fx.client.post("/v1/instances", client, big).status()).isEqualTo(503);
    fx.registerMachines(1, ApiFixture.facts(8, 32), true);
    assertThat(fx.client.post("/v1/instances", client, big).status()).isEqualTo(201);
  }
}
