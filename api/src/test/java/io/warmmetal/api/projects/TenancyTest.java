package io.warmmetal.api.projects;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.warmmetal.api.testing.ApiClient;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two projects sharing one fleet: neither sees nor touches the other's; quotas hold under
 * concurrent launches; a client token is the project's, so a rotated credential retrying a launch
 * gets the same launch.
 */
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
      assertThat(
              fx.client.put("/v1/projects/" + project, ApiFixture.ADMIN, new JsonObject()).status())
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
    assertThat(launched.body().getJsonArray("instances").getJsonObject(0).getString("project"))
        .isEqualTo("team-a");
    String machine =
        launched.body().getJsonArray("instances").getJsonObject(0).getString("machineId");

    // B: the instance, its machine and its events do not exist.
    assertThat(ids(fx.client.get("/v1/instances", b))).doesNotContain(instance);
    for (String token : List.of(b, bReader)) {
      Response got = fx.client.get("/v1/instances/" + instance, token);
      assertThat(got.status()).isEqualTo(404);
      assertThat(got.errorCode()).isEqualTo("NotFound");
      assertThat(fx.client.get("/v1/machines/" + machine, token).status()).isEqualTo(404);
      assertThat(
              fx.client
                  .get("/v1/events?instanceId=" + instance, token)
                  .body()
                  .getJsonArray("items"))
          .isEmpty();
    }
    Response terminated = fx.client.delete("/v1/instances/" + instance, b);
    assertThat(terminated.status()).isEqualTo(404);
    assertThat(
            fx.count(
                "SELECT count(*) FROM instances WHERE id = $1 AND state = 'pending'", instance))
        .isEqualTo(1);
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
    assertThat(
            fx.client
                .get("/v1/instances/" + instance, fx.token("client", "team-a"))
                .body()
                .getString("project"))
        .isEqualTo("team-a");
    // The same client token in another project is another launch; in the same project, a replay.
    String inB =
        instanceOf(
            fx.client.inProject("team-b").post("/v1/instances", ApiFixture.ADMIN, launch("op-1")));
    assertThat(inB).isNotEqualTo(instance);
    Response replay = inA.post("/v1/instances", ApiFixture.ADMIN, launch("op-1"));
    assertThat(replay.status()).isEqualTo(200);
    assertThat(replay.body().getJsonArray("instances").getJsonObject(0).getString("id"))
        .isEqualTo(instance);
    // A project that does not exist is named as such; nothing is launched.
    Response unknown =
        fx.client.inProject("team-z").post("/v1/instances", ApiFixture.ADMIN, launch(null));
    assertThat(unknown.status()).isEqualTo(404);
    assertThat(unknown.body().getString("message")).contains("team-z");
    assertThat(unknown.body().getString("field"))
        .as("the header named it")
        .isEqualTo("WarmMetal-Project");
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(2);
  }

  @Test
  void tokensBelongToAProjectThatExists() {
    Response made =
        fx.client.post(
            "/v1/tokens",
            ApiFixture.ADMIN,
            new JsonObject().put("name", "ci").put("role", "client").put("project", "team-a"));
    assertThat(made.status()).isEqualTo(201);
    assertThat(made.body().getString("project")).isEqualTo("team-a");
    Response missing =
        fx.client.post(
            "/v1/tokens",
            ApiFixture.ADMIN,
            new JsonObject().put("name", "ci").put("role", "client").put("project", "nowhere"));
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
    Response put =
        fx.client.put(
            "/v1/projects/team-a",
            ApiFixture.ADMIN,
            new JsonObject()
                .put(
                    "quotas",
                    new JsonObject().put(SHAPE, new JsonObject().put("maxInstances", 3))));
    assertThat(put.status()).isEqualTo(200);
    assertThat(put.body().getJsonObject("quotas").getJsonObject(SHAPE).getInteger("maxInstances"))
        .isEqualTo(3);
    String a = fx.token("client", "team-a");
    String b = fx.token("client", "team-b");

    List<Future<Response>> storm = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      storm.add(
          fx.client.send(
              HttpMethod.POST, "/v1/instances", a, launch(UUID.randomUUID().toString())));
    }
    Future.join(storm).await();
    List<Response> answers = storm.stream().map(Future::result).toList();
    assertThat(answers.stream().filter(r -> r.status() == 201)).hasSize(3);
    Response refused = answers.stream().filter(r -> r.status() != 201).findFirst().orElseThrow();
    assertThat(refused.status()).isEqualTo(403);
    assertThat(refused.errorCode()).isEqualTo("QuotaExceeded");
    assertThat(
            refused
                .body()
                .getJsonObject("details")
                .getJsonObject("quotas")
                .getJsonObject(SHAPE)
                .getInteger("inUse"))
        .isEqualTo(3);
    assertThat(fx.count("SELECT count(*) FROM instances WHERE project = 'team-a'")).isEqualTo(3);
    assertThat(fx.count("SELECT count(*) FROM launches WHERE project = 'team-a'")).isEqualTo(3);
    // Another project is not held by A's quota, and a batch that wants more than the room left gets
    // none of it.
    instanceOf(fx.client.post("/v1/instances", b, launch(null)));
    assertThat(
            fx.client
                .get("/v1/projects/team-a", a)
                .body()
                .getJsonObject("quotas")
                .getJsonObject(SHAPE)
                .getInteger("inUse"))
        .isEqualTo(3);

    // A project sees its quota on the shape; a shape its quota closes is not there for it.
    JsonObject shape = fx.client.get("/v1/shapes/" + SHAPE, a).body();
    assertThat(shape.getJsonObject("quota"))
        .isEqualTo(new JsonObject().put("maxInstances", 3).put("inUse", 3));
    assertThat(fx.client.get("/v1/shapes/" + SHAPE, ApiFixture.ADMIN).body().containsKey("quota"))
        .isFalse();
    assertThat(
            fx.client
                .put(
                    "/v1/projects/team-b",
                    ApiFixture.ADMIN,
                    new JsonObject()
                        .put(
                            "quotas",
                            new JsonObject().put(SHAPE, new JsonObject().put("maxInstances", 0))))
                .status())
        .isEqualTo(200);
    assertThat(fx.client.get("/v1/shapes", b).body().getJsonArray("items")).isEmpty();
    assertThat(fx.client.get("/v1/shapes/" + SHAPE, b).status()).isEqualTo(404);
    assertThat(fx.client.get("/v1/projects/team-b", b).body().getJsonObject("quotas")).isEmpty();
    // Launching it is answered exactly as launching a shape that does not exist: nothing tells B it
    // is there.
    Response closed = fx.client.post("/v1/instances", b, launch(null));
    Response missing =
        fx.client.post("/v1/instances", b, new JsonObject().put("shape", "x86-9c-99g"));
    assertThat(closed.status()).as(closed.raw()).isEqualTo(400);
    assertThat(closed.errorCode()).isEqualTo(missing.errorCode()).isEqualTo("ValidationError");
    assertThat(closed.body().getString("field"))
        .isEqualTo(missing.body().getString("field"))
        .isEqualTo("shape");
    assertThat(closed.body().getString("message").replace(SHAPE, "<shape>"))
        .isEqualTo(missing.body().getString("message").replace("x86-9c-99g", "<shape>"));
    assertThat(closed.body().containsKey("details")).isFalse();
    // A shape it names beside the closed one is launched as if the closed one were not named.
    fx.registerMachines(1, ApiFixture.facts(16, 64), false); // not warm yet: too few to launch
    Response beside =
        fx.client.post(
            "/v1/instances",
            b,
            new JsonObject().put("shapes", new JsonArray().add(SHAPE).add("x86-16c-64g")));
    assertThat(beside.status()).as(beside.raw()).isEqualTo(503);
    assertThat(beside.errorCode()).isEqualTo("InsufficientCapacity");
    assertThat(beside.body().getString("message")).doesNotContain(SHAPE);
    assertThat(beside.body().getJsonObject("details").getJsonObject("available").fieldNames())
        .containsExactly("x86-16c-64g");
    // The operator sees the shape and its quota of 0, and is told why it launches nothing there.
    ApiClient inB = fx.client.inProject("team-b");
    assertThat(inB.get("/v1/shapes/" + SHAPE, ApiFixture.ADMIN).body().getJsonObject("quota"))
        .isEqualTo(new JsonObject().put("maxInstances", 0).put("inUse", 1));
    Response operator = inB.post("/v1/instances", ApiFixture.ADMIN, launch(null));
    assertThat(operator.status()).as(operator.raw()).isEqualTo(403);
    assertThat(operator.errorCode()).isEqualTo("QuotaExceeded");
    assertThat(
            operator
                .body()
                .getJsonObject("details")
                .getJsonObject("quotas")
                .getJsonObject(SHAPE)
                .getInteger("maxInstances"))
        .isZero();
    // A quota that is merely used up is no secret: A still hears 403 QuotaExceeded (below).

    // An instance that has ended makes room again (shutting-down still counts: its machine is still
    // in use).
    String first =
        answers.stream()
            .filter(r -> r.status() == 201)
            .findFirst()
            .map(TenancyTest::instanceOf)
            .orElseThrow();
    String machine = fx.client.get("/v1/instances/" + first, a).body().getString("machineId");
    assertThat(fx.client.delete("/v1/instances/" + first, a).status()).isEqualTo(200);
    assertThat(fx.client.post("/v1/instances", a, launch(null)).status()).isEqualTo(403);
    fx.report(fx.openCommands(machine, "reset").get(0), true);
    Response again =
        fx.client.post("/v1/instances", a, new JsonObject().put("shape", SHAPE).put("minCount", 2));
    assertThat(again.status()).isEqualTo(403); // only one fits: nothing is launched
    instanceOf(fx.client.post("/v1/instances", a, launch(null)));
    assertThat(
            fx.count(
                "SELECT count(*) FROM instances WHERE project = 'team-a' AND state <> 'terminated'"))
        .isEqualTo(3);
  }

  /** A client token minted in the project: its id and its secret. */
  private JsonObject mint(String project) {
    Response made =
        fx.client.post(
            "/v1/tokens",
            ApiFixture.ADMIN,
            new JsonObject()
                .put("name", "controller")
                .put("role", "client")
                .put("project", project));
    assertThat(made.status()).as(made.raw()).isEqualTo(201);
    return made.body();
  }

  private static List<String> instances(Response r) {
    List<String> ids = new ArrayList<>();
    r.body().getJsonArray("instances").forEach(i -> ids.add(((JsonObject) i).getString("id")));
    return ids;
  }

  /**
   * A client token names one launch in its project, whichever of the project's API tokens sends it.
   */
  @Test
  void aRotatedCredentialRetryingALaunchGetsTheSameLaunch() {
    JsonObject first = mint("team-a");
    Response launched =
        fx.client.post("/v1/instances", first.getString("token"), launch("nodeclaim-x7k2p"));
    assertThat(launched.status()).as(launched.raw()).isEqualTo(201);

    // The controller's Secret is rotated: a new token in the project, the old one revoked, then the
    // retry.
    String second = mint("team-a").getString("token");
    assertThat(fx.client.delete("/v1/tokens/" + first.getString("id"), ApiFixture.ADMIN).status())
        .isEqualTo(204);
    assertThat(
            fx.client
                .post("/v1/instances", first.getString("token"), launch("nodeclaim-x7k2p"))
                .status())
        .isEqualTo(401);
    Response retried = fx.client.post("/v1/instances", second, launch("nodeclaim-x7k2p"));
    assertThat(retried.status()).as(retried.raw()).isEqualTo(200);
    assertThat(retried.body().getString("launchId"))
        .isEqualTo(launched.body().getString("launchId"));
    assertThat(instances(retried)).isEqualTo(instances(launched));
    // So does an operator launching in the project with it.
    Response byOperator =
        fx.client
            .inProject("team-a")
            .post("/v1/instances", ApiFixture.ADMIN, launch("nodeclaim-x7k2p"));
    assertThat(byOperator.status()).as(byOperator.raw()).isEqualTo(200);
    assertThat(instances(byOperator)).isEqualTo(instances(launched));

    // Other parameters under the same client token in the project: 409, whichever token sends them.
    Response other =
        fx.client.post("/v1/instances", second, launch("nodeclaim-x7k2p").put("maxCount", 2));
    assertThat(other.status()).as(other.raw()).isEqualTo(409);
    assertThat(other.errorCode()).isEqualTo("IdempotentParameterMismatch");
    assertThat(other.body().getString("field")).isEqualTo("clientToken");

    // Another project's same client token is its own launch.
    Response inB =
        fx.client.post(
            "/v1/instances", mint("team-b").getString("token"), launch("nodeclaim-x7k2p"));
    assertThat(inB.status()).as(inB.raw()).isEqualTo(201);
    assertThat(instances(inB)).doesNotContainAnyElementsOf(instances(launched));

    assertThat(fx.count("SELECT count(*) FROM launches WHERE client_token = 'nodeclaim-x7k2p'"))
        .isEqualTo(2);
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(2);
  }

  @Test
  void twoTokensOfAProjectSendingOneClientTokenAtOnceLaunchOnce() {
    List<String> tokens =
        List.of(mint("team-a").getString("token"), mint("team-a").getString("token"));
    List<Future<Response>> storm = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      storm.add(
          fx.client.send(
              HttpMethod.POST, "/v1/instances", tokens.get(i % 2), launch("nodeclaim-storm")));
    }
    Future.join(storm).await();

    Set<String> launchIds = new HashSet<>();
    int created = 0;
    for (Future<Response> f : storm) {
      Response r = f.result();
      assertThat(r.status()).as(r.raw()).isIn(200, 201);
      created += r.status() == 201 ? 1 : 0;
      launchIds.add(r.body().getString("launchId"));
    }
    assertThat(created).isEqualTo(1);
    assertThat(launchIds).hasSize(1);
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(1);
  }

  /**
   * The launch function finds a client token's launch through the unique index on (project, client
   * token): its insert names it as the arbiter, and its look-up (a cached generic plan inside the
   * function) scans it — also when the table holds many launches.
   */
  @Test
  void theClientTokenLookUpIsAnIndexScan() {
    fx.db()
        .query(
            """
        INSERT INTO launches (id, caller, client_token, request_hash, project)
        SELECT 'r-' || n, 'tok-' || (n % 50), 'token-' || n, '\\x00',
               CASE WHEN n % 2 = 0 THEN 'team-a' ELSE 'default' END
        FROM generate_series(1, 20000) AS n""")
        .execute()
        .await();
    fx.db().query("ANALYZE launches").execute().await();

    String lookUp =
        plan(
            """
        PREPARE look_up(text, text) AS SELECT id, request_hash FROM launches
        WHERE project = $1 AND client_token = $2 AND NOT token_per_caller""",
            "look_up('team-a', 'token-42')");
    assertThat(lookUp)
        .contains("Index Scan using launches_project_client_token")
        .doesNotContain("Seq Scan");
    String ownLegacy =
        plan(
            """
        PREPARE own_legacy(text, text, text) AS SELECT id, request_hash FROM launches
        WHERE project = $1 AND caller = $2 AND client_token = $3 AND token_per_caller""",
            "own_legacy('team-a', 'tok-2', 'token-42')");
    assertThat(ownLegacy).contains("launches_token_per_caller").doesNotContain("Seq Scan");
    String insert =
        plan(
            """
        PREPARE record_launch(text, text, text, text) AS
        INSERT INTO launches (id, caller, client_token, request_hash, project) VALUES ($1, $2, $3, '\\x00', $4)
        ON CONFLICT (project, client_token) WHERE NOT token_per_caller DO NOTHING""",
            "record_launch('r-x', 'tok-1', 'token-42', 'team-a')");
    assertThat(insert).contains("Conflict Arbiter Indexes: launches_project_client_token");
  }

  /**
   * The generic plan (as the launch function caches) of a prepared statement, on one connection.
   */
  private String plan(String prepare, String execute) {
    SqlConnection conn = fx.db().getConnection().await();
    try {
      conn.query("SET plan_cache_mode = force_generic_plan").execute().await();
      conn.query(prepare).execute().await();
      StringBuilder plan = new StringBuilder();
      for (Row row : conn.query("EXPLAIN EXECUTE " + execute).execute().await()) {
        plan.append(row.getString(0)).append('\n');
      }
      return plan.toString();
    } finally {
      conn.query("DEALLOCATE " + execute.substring(0, execute.indexOf('('))).execute().await();
      conn.query("RESET plan_cache_mode").execute().await();
      conn.close().await();
    }
  }
}
