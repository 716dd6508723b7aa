package io.warmmetal.api.projects;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Two projects sharing one fleet: neither sees nor touches the other's; quotas hold under concurrent launches. */
@ExtendWith(VertxExtension.class)
class TenancyTest {
  private static final String SHAPE = "x86-8c-32g";
  private ApiFixture fx;
  private List<String> machines;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
    machines = fx.registerMachines(12, ApiFixture.facts(8, 32), true);
    for (String project : List.of("team-a", "team-b")) {
      assertThat(fx.client.put("/v1/projects/" + project, ApiFixture.ADMIN, new JsonObject()).status())
          .isEqualTo(200);
    }
  }

  @AfterEach
  void stop() {
    fx.close();
  }

  private static JsonObject launch(String clientToken) {
    JsonObject body = new JsonObject().put("shape", SHAPE);
    return clientToken == null ? body : body.put("clientToken", clientToken);
  }

  private static String instanceOf(Response launched) {
    assertThat(launched.status()).as(launched.raw()).isEqualTo(201);
    return launched.body().getJsonArray("instances").getJsonObject(0).getString("id");
  }

  private static List<String> ids(Response page) {
    assertThat(page.status()).as(page.raw()).isEqualTo(200);
    List<String> out = new ArrayList<>();
    for (Object o : page.body().getJsonArray("items")) {
      out.add(((JsonObject) o).getString("id"));
    }
    return out;
  }

  @Test
  void aProjectNeitherSeesNorTouchesAnothersInstances() {
    String a = fx.token("client", "team-a");
    String b = fx.token("client", "team-b");
    String bReader = fx.token("read-only", "team-b");
    Response launched = fx.client.post("/v1/instances", a, launch("shared-token"));
    String instance = instanceOf(launched);
    assertThat(launched.body().getJsonArray("instances").getJsonObject(0).getString("project")).isEqualTo("team-a");
    String machine = launched.body().getJsonArray("instances").getJsonObject(0).getString("machineId");

    // B: the instance, its machine and its events do not exist.
    assertThat(ids(fx.client.get("/v1/instances", b))).doesNotContain(instance);
    for (String token : List.of(b, bReader)) {
      Response got = fx.client.get("/v1/instances/" + instance, token);
      assertThat(got.status()).isEqualTo(404);
      assertThat(got.errorCode()).isEqualTo("NotFound");
      assertThat(fx.client.get("/v1/machines/" + machine, token).status()).isEqualTo(404);
      assertThat(fx.client.get("/v1/events?instanceId=" + instance, token).body().getJsonArray("items")).isEmpty();
    }
    Response terminated = fx.client.delete("/v1/instances/" + instance, b);
    assertThat(terminated.status()).isEqualTo(404);
    assertThat(fx.count("SELECT count(*) FROM instances WHERE id = $1 AND state = 'pending'", instance)).isEqualTo(1);
    // Its client token is A's: B reusing it launches anew rather than replaying A's launch.
    String bInstance = instanceOf(fx.client.post("/v1/instances", b, launch("shared-token")));
    assertThat(bInstance).isNotEqualTo(instance);
    // Naming another project in the header is refused for a project's tokens.
    Response named = fx.client.inProject("team-a").get("/v1/instances", b);
    assertThat(named.status()).isEqualTo(403);
    assertThat(named.body().getString("message")).contains("team-b");
    // The fleet is the operator's.
    assertThat(fx.client.get("/v1/machines", b).status()).isEqualTo(403);
    assertThat(fx.client.get("/v1/pools", b).status()).isEqualTo(403);

    // A: its own instance, its machine, its events; then it terminates it.
    assertThat(ids(fx.client.get("/v1/instances", a))).containsExactly(instance);
    assertThat(fx.client.get("/v1/machines/" + machine, a).status()).isEqualTo(200);
    JsonArray events = fx.client.get("/v1/events", a).body().getJsonArray("items");
    assertThat(events).isNotEmpty();
    events.forEach(e -> assertThat(((JsonObject) e).getString("instanceId")).isEqualTo(instance));
    assertThat(fx.client.delete("/v1/instances/" + instance, a).status()).isEqualTo(200);

    // The operator sees both, or one project when it names it.
    assertThat(ids(fx.client.get("/v1/instances", ApiFixture.ADMIN))).contains(instance, bInstance);
    assertThat(ids(fx.client.inProject("team-b").get("/v1/instances", ApiFixture.ADMIN)))
        .containsExactly(bInstance);
    String fleetReader = fx.token("fleet-reader", "team-b");
    assertThat(fx.client.get("/v1/instances/" + instance, fleetReader).status()).isEqualTo(200);
  }

  @Test
  void anOperatorLaunchesIntoTheProjectItNames() {
    ApiClient inA = fx.client.inProject("team-a");
    String instance = instanceOf(inA.post("/v1/instances", ApiFixture.ADMIN, launch("op-1")));
    assertThat(fx.client.get("/v1/instances/" + instance, fx.token("client", "team-a")).body().getString("project"))
        .isEqualTo("team-a");
    // The same client token in another project is another launch; in the same project, a replay.
    String inB = instanceOf(fx.client.inProject("team-b").post("/v1/instances", ApiFixture.ADMIN, launch("op-1")));
    assertThat(inB).isNotEqualTo(instance);
    Response replay = inA.post("/v1/instances", ApiFixture.ADMIN, launch("op-1"));
    assertThat(replay.status()).isEqualTo(200);
    assertThat(replay.body().getJsonArray("instances").getJsonObject(0).getString("id")).isEqualTo(instance);
    // A project that does not exist is named as such; nothing is launched.
    Response unknown = fx.client.inProject("team-z").post("/v1/instances", ApiFixture.ADMIN, launch(null));
    assertThat(unknown.status()).isEqualTo(404);
    assertThat(unknown.body().getString("message")).contains("team-z");
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(2);
  }

  @Test
  void tokensBelongToAProjectThatExists() {
    Response made = fx.client.post("/v1/tokens", ApiFixture.ADMIN, new JsonObject().put("name", "ci")
        .put("role", "client").put("project", "team-a"));
    assertThat(made.status()).isEqualTo(201);
    assertThat(made.body().getString("project")).isEqualTo("team-a");
    Response missing = fx.client.post("/v1/tokens", ApiFixture.ADMIN, new JsonObject().put("name", "ci")
        .put("role", "client").put("project", "nowhere"));
    assertThat(missing.status()).isEqualTo(400);
    assertThat(missing.body().getString("field")).isEqualTo("project");
    assertThat(fx.count("SELECT count(*) FROM api_tokens WHERE project = 'nowhere'")).isZero();
    // A project's token reads its own project only.
    String a = made.body().getString("token");
    assertThat(fx.client.get("/v1/projects/team-a", a).status()).isEqualTo(200);
    assertThat(fx.client.get("/v1/projects/team-b", a).status()).isEqualTo(404);
    assertThat(fx.client.get("/v1/projects", a).status()).isEqualTo(403);
  }

  @Test
  void aQuotaHoldsUnderConcurrentLaunchesAndFreesAsInstancesEnd(Vertx vertx) {
    Response put = fx.client.put("/v1/projects/team-a", ApiFixture.ADMIN, new JsonObject()
        .put("quotas", new JsonObject().put(SHAPE, new JsonObject().put("maxInstances", 3))));
    assertThat(put.status()).isEqualTo(200);
    assertThat(put.body().getJsonObject("quotas").getJsonObject(SHAPE).getInteger("maxInstances")).isEqualTo(3);
    String a = fx.token("client", "team-a");
    String b = fx.token("client", "team-b");

    List<Future<Response>> storm = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      storm.add(fx.client.send(HttpMethod.POST, "/v1/instances", a, launch(UUID.randomUUID().toString())));
    }
    Future.join(storm).await();
    List<Response> answers = storm.stream().map(Future::result).toList();
    assertThat(answers.stream().filter(r -> r.status() == 201)).hasSize(3);
    Response refused = answers.stream().filter(r -> r.status() != 201).findFirst().orElseThrow();
    assertThat(refused.status()).isEqualTo(403);
    assertThat(refused.errorCode()).isEqualTo("QuotaExceeded");
    assertThat(refused.body().getJsonObject("details").getJsonObject("quotas").getJsonObject(SHAPE)
        .getInteger("inUse")).isEqualTo(3);
    assertThat(fx.count("SELECT count(*) FROM instances WHERE project = 'team-a'")).isEqualTo(3);
    assertThat(fx.count("SELECT count(*) FROM launches WHERE project = 'team-a'")).isEqualTo(3);
    // Another project is not held by A's quota, and a batch that wants more than the room left gets none of it.
    instanceOf(fx.client.post("/v1/instances", b, launch(null)));
    assertThat(fx.client.get("/v1/projects/team-a", a).body().getJsonObject("quotas").getJsonObject(SHAPE)
        .getInteger("inUse")).isEqualTo(3);

    // A project sees its quota on the shape; a shape its quota closes is not there for it.
    JsonObject shape = fx.client.get("/v1/shapes/" + SHAPE, a).body();
    assertThat(shape.getJsonObject("quota")).isEqualTo(new JsonObject().put("maxInstances", 3).put("inUse", 3));
    assertThat(fx.client.get("/v1/shapes/" + SHAPE, ApiFixture.ADMIN).body().containsKey("quota")).isFalse();
    assertThat(fx.client.put("/v1/projects/team-b", ApiFixture.ADMIN, new JsonObject()
        .put("quotas", new JsonObject().put(SHAPE, new JsonObject().put("maxInstances", 0)))).status()).isEqualTo(200);
    assertThat(fx.client.get("/v1/shapes", b).body().getJsonArray("items")).isEmpty();
    assertThat(fx.client.get("/v1/shapes/" + SHAPE, b).status()).isEqualTo(404);
    Response closed = fx.client.post("/v1/instances", b, launch(null));
    assertThat(closed.status()).isEqualTo(403);
    assertThat(closed.errorCode()).isEqualTo("QuotaExceeded");

    // An instance that has ended makes room again (shutting-down still counts: its machine is still in use).
    String first = answers.stream().filter(r -> r.status() == 201).findFirst().map(TenancyTest::instanceOf)
        .orElseThrow();
    String machine = fx.client.get("/v1/instances/" + first, a).body().getString("machineId");
    assertThat(fx.client.delete("/v1/instances/" + first, a).status()).isEqualTo(200);
    assertThat(fx.client.post("/v1/instances", a, launch(null)).status()).isEqualTo(403);
    fx.report(fx.openCommands(machine, "reset").get(0), true);
    Response again = fx.client.post("/v1/instances", a, new JsonObject().put("shape", SHAPE).put("minCount", 2));
    assertThat(again.status()).isEqualTo(403); // only one fits: nothing is launched
    instanceOf(fx.client.post("/v1/instances", a, launch(null)));
    assertThat(fx.count("SELECT count(*) FROM instances WHERE project = 'team-a' AND state <> 'terminated'"))
        .isEqualTo(3);
  }
}
