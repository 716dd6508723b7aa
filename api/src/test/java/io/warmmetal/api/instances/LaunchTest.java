package io.warmmetal.api.instances;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * RunInstances semantics: min/max counts, shape preference, aliases, machines still preparing,
 * cordons, machine labels (only machines carrying all of them are taken, in the launch's one
 * transaction), pre-joined standby.
 */
@ExtendWith(VertxExtension.class)
class LaunchTest {
  private static final String ZONE = "topology.kubernetes.io/zone";

  private ApiFixture fx;
  private String client;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
    client = fx.token("client");
  }

  @AfterEach
  void stop() {
    fx.close();
  }

  private Response launch(JsonObject body) {
    return fx.client.post("/v1/instances", client, body);
  }

  @Test
  void launchesBetweenMinAndMaxAndRefusesBelowMinWithoutClaiming() {
    fx.registerMachines(5, ApiFixture.facts(8, 32), true);

    Response partial =
        launch(new JsonObject().put("shape", "x86-8c-32g").put("minCount", 3).put("maxCount", 10));
    assertThat(partial.status()).isEqualTo(201);
    assertThat(partial.body().getJsonArray("instances")).hasSize(5);

    fx.registerMachines(2, ApiFixture.facts(8, 32), true);
    Response refused = launch(new JsonObject().put("shape", "x86-8c-32g").put("minCount", 3));
    assertThat(refused.status()).isEqualTo(503);
    assertThat(refused.errorCode()).isEqualTo("InsufficientCapacity");
    assertThat(
            refused
                .body()
                .getJsonObject("details")
                .getJsonObject("available")
                .getJsonObject("x86-8c-32g")
                .getInteger("warm"))
        .isEqualTo(2);
    // Nothing was claimed by the refused launch: both machines are still warm and unbound.
    assertThat(
            fx.count("SELECT count(*) FROM machines WHERE state = 'warm' AND instance_id IS NULL"))
        .isEqualTo(2);
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(5);

    Response exact = launch(new JsonObject().put("shape", "x86-8c-32g").put("minCount", 2));
    assertThat(exact.status()).isEqualTo(201);
    assertThat(exact.body().getJsonArray("instances")).hasSize(2); // maxCount defaults to minCount
  }

  @Test
  void instancesArePendingOnJoiningMachinesWithAJoinQueued() {
    List<String> machines = fx.registerMachines(1, ApiFixture.facts(8, 32), true);
    Response r =
        launch(
            new JsonObject()
                .put("shape", "x86-8c-32g")
                .put("labels", new JsonObject().put("a", "b")));
    JsonObject instance = r.body().getJsonArray("instances").getJsonObject(0);
    assertThat(instance.getString("state")).isEqualTo("pending");
    assertThat(instance.getString("machineId")).isEqualTo(machines.get(0));
    assertThat(instance.getString("providerId")).isEqualTo("warmmetal://" + machines.get(0));
    assertThat(instance.getJsonObject("labels").getString("a")).isEqualTo("b");

    JsonObject machine = fx.client.get("/v1/machines/" + machines.get(0), ApiFixture.ADMIN).body();
    assertThat(machine.getString("state")).isEqualTo("joining");
    assertThat(machine.getString("instanceId")).isEqualTo(instance.getString("id"));
    assertThat(fx.openCommands(machines.get(0), "join")).hasSize(1);
    // The same instance reads back identically.
    assertThat(fx.client.get("/v1/instances/" + instance.getString("id"), client).body())
        .isEqualTo(instance);
  }

  @Test
  void takesAcceptableShapesInOrderOfPreference() {
    fx.registerMachines(1, ApiFixture.facts(8, 32), true);
    fx.registerMachines(3, ApiFixture.facts(16, 64), true);
    Response r =
        launch(
            new JsonObject()
                .put("shapes", new JsonArray().add("x86-8c-32g").add("x86-16c-64g"))
                .put("minCount", 3));
    assertThat(r.status()).isEqualTo(201);
    assertThat(
            r.body().getJsonArray("instances").stream()
                .map(i -> ((JsonObject) i).getString("shape")))
        .containsExactly("x86-8c-32g", "x86-16c-64g", "x86-16c-64g");
  }

  @Test
  void launchesByAliasAndRefusesUnknownShapes() {
    fx.registerMachines(1, ApiFixture.gpuFacts(64, 512, 4, "NVIDIA H100 80GB HBM3"), true);
    Response alias =
        fx.client.call(
            HttpMethod.PATCH,
            "/v1/shapes/x86-64c-512g-4xh100",
            ApiFixture.ADMIN,
            new JsonObject().put("alias", "gpu-large").put("pricePerHour", 12.5));
    assertThat(alias.status()).isEqualTo(200);
    assertThat(alias.body().getString("alias")).isEqualTo("gpu-large");

    Response r = launch(new JsonObject().put("shape", "gpu-large"));
    assertThat(r.status()).isEqualTo(201);
    assertThat(r.body().getJsonArray("instances").getJsonObject(0).getString("shape"))
        .isEqualTo("x86-64c-512g-4xh100");

    Response unknown = launch(new JsonObject().put("shape", "arm-2c-4g"));
    assertThat(unknown.status()).isEqualTo(400);
    assertThat(unknown.body().getString("field")).isEqualTo("shape");
  }

  @Test
  void takesPreparingMachinesOnlyWhenAskedAndJoinsThemOncePrepared() {
    List<String> standby = fx.registerMachines(1, ApiFixture.facts(4, 16), false);
    fx.client.put(
        "/v1/pools/x86-4c-16g",
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 1).put("maxWarm", 1));
    fx.reconcilePools();
    assertThat(
            fx.client
                .get("/v1/machines/" + standby.get(0), ApiFixture.ADMIN)
                .body()
                .getString("state"))
        .isEqualTo("preparing");

    assertThat(launch(new JsonObject().put("shape", "x86-4c-16g")).status()).isEqualTo(503);
    Response r = launch(new JsonObject().put("shape", "x86-4c-16g").put("allowPreparing", true));
    assertThat(r.status()).isEqualTo(201);
    String instanceId = r.body().getJsonArray("instances").getJsonObject(0).getString("id");

    // Prepared: the machine goes on to join (not to warm), and the instance runs once joined.
    fx.report(fx.openCommands(standby.get(0), "prepare").get(0), true);
    assertThat(
            fx.client
                .get("/v1/machines/" + standby.get(0), ApiFixture.ADMIN)
                .body()
                .getString("state"))
        .isEqualTo("joining");
    fx.report(fx.openCommands(standby.get(0), "join").get(0), true);
    JsonObject running = fx.client.get("/v1/instances/" + instanceId, client).body();
    assertThat(running.getString("state")).isEqualTo("running");
    assertThat(running.getString("runningAt")).isNotNull();
  }

  @Test
  void cordonedMachinesAreNotHandedOut() {
    List<String> ids = fx.registerMachines(1, ApiFixture.facts(2, 8), true);
    assertThat(
            fx.client
                .post("/v1/machines/" + ids.get(0) + "/cordon", ApiFixture.ADMIN, null)
                .status())
        .isEqualTo(200);
    assertThat(launch(new JsonObject().put("shape", "x86-2c-8g")).status()).isEqualTo(503);
    fx.client.post("/v1/machines/" + ids.get(0) + "/uncordon", ApiFixture.ADMIN, null);
    assertThat(launch(new JsonObject().put("shape", "x86-2c-8g")).status()).isEqualTo(201);
  }

  private static JsonObject zone(String zone) {
    return new JsonObject().put(ZONE, zone);
  }

  private static String machineOf(Response launched) {
    return launched.body().getJsonArray("instances").getJsonObject(0).getString("machineId");
  }

  private static JsonObject request(JsonObject machineLabels) {
    return new JsonObject().put("shape", "x86-8c-32g").put("machineLabels", machineLabels);
  }

  /** What a launch writes, to check that a refused one wrote nothing. */
  private List<Long> written() {
    return List.of(
        fx.count("SELECT count(*) FROM launches"),
        fx.count("SELECT count(*) FROM instances"),
        fx.count("SELECT count(*) FROM commands"),
        fx.count("SELECT count(*) FROM events"),
        fx.count("SELECT count(*) FROM machines WHERE state = 'warm' AND instance_id IS NULL"));
  }

  @Test
  void launchesOnlyOnMachinesCarryingEveryMachineLabel() {
    fx.registerMachines(3, ApiFixture.facts(8, 32), true, zone("rack-1").put("disk", "nvme"));
    String rack2 =
        fx.registerMachines(1, ApiFixture.facts(8, 32), true, zone("rack-2").put("disk", "nvme"))
            .get(0);
    String rack2Hdd =
        fx.registerMachines(1, ApiFixture.facts(8, 32), true, zone("rack-2").put("disk", "hdd"))
            .get(0);

    Response r = launch(request(zone("rack-2").put("disk", "nvme")));
    assertThat(r.status()).isEqualTo(201);
    assertThat(machineOf(r)).isEqualTo(rack2);
    assertThat(machineOf(launch(request(zone("rack-2"))))).isEqualTo(rack2Hdd);
    // Without machineLabels any machine of the shape will do, as before.
    assertThat(launch(new JsonObject().put("shape", "x86-8c-32g")).status()).isEqualTo(201);
    assertThat(
            fx.count(
                "SELECT count(*) FROM machines WHERE state = 'warm' AND labels @> $1",
                zone("rack-1")))
        .isEqualTo(2);
  }

  @Test
  void noMachineWithTheMachineLabelsIsInsufficientCapacityNamingThemAndWritesNothing() {
    fx.registerMachines(2, ApiFixture.facts(8, 32), true, zone("rack-1"));
    fx.registerMachines(
        1, ApiFixture.facts(8, 32), false, zone("rack-2")); // standby: not without allowStandby
    List<Long> before = written();

    Response refused = launch(request(zone("rack-2")).put("clientToken", "tok-none"));
    assertThat(refused.status()).isEqualTo(503);
    assertThat(refused.errorCode()).isEqualTo("InsufficientCapacity");
    assertThat(refused.body().getString("message")).contains("with labels " + ZONE + "=rack-2");
    JsonObject details = refused.body().getJsonObject("details");
    assertThat(details.getJsonObject("machineLabels")).isEqualTo(zone("rack-2"));
    // The availability is of matching machines: one, in standby.
    assertThat(details.getJsonObject("available").getJsonObject("x86-8c-32g"))
        .isEqualTo(new JsonObject().put("warm", 0).put("preparing", 0).put("standby", 1));
    // Two labels of which the machines have one each: no match either.
    assertThat(launch(request(zone("rack-1").put("disk", "nvme"))).status()).isEqualTo(503);
    assertThat(launch(request(new JsonObject().put("disk", "nvme"))).status()).isEqualTo(503);
    assertThat(written()).isEqualTo(before);

    // The refused token was not used up: with a matching machine there, it launches.
    fx.registerMachines(1, ApiFixture.facts(8, 32), true, zone("rack-2"));
    assertThat(launch(request(zone("rack-2")).put("clientToken", "tok-none")).status())
        .isEqualTo(201);
  }

  /** Facts of a machine booted from a node image whose kubelet is {@code version}. */
  private static JsonObject bootedWith(String version) {
    return ApiFixture.facts(8, 32)
        .put(
            "image",
            new JsonObject()
                .put("version", version + "-0123456789ab")
                .put("kubernetesVersion", version));
  }

  private Response launchJoining(String controlPlaneVersion) {
    JsonObject join =
        new JsonObject()
            .put("apiServer", "10.0.0.1:6443")
            .put("caCertHash", "sha256:" + "ab".repeat(32))
            .put("bootstrapToken", "abcdef.0123456789abcdef");
    if (controlPlaneVersion != null) {
      join.put("controlPlaneVersion", controlPlaneVersion);
    }
    return launch(
        new JsonObject().put("shape", "x86-8c-32g").put("maxCount", 10).put("kubernetes", join));
  }

  private List<String> machinesOf(Response launched) {
    assertThat(launched.status()).as(launched.body().encode()).isEqualTo(201);
    return launched.body().getJsonArray("instances").stream()
        .map(i -> ((JsonObject) i).getString("machineId"))
        .toList();
  }

  @Test
  void aJoinNamingItsControlPlaneTakesOnlyMachinesWhoseKubeletItAccepts() {
    String v120 = fx.registerMachines(1, bootedWith("v1.20.2"), true).get(0);
    String v124 =
        fx.registerMachines(1, bootedWith("v1.24.0"), true)
            .get(0); // newer than a 1.22 control plane
    String v119 =
        fx.registerMachines(1, bootedWith("v1.19.16"), true)
            .get(0); // three minor versions behind 1.22
    String unsaid =
        fx.registerMachines(1, ApiFixture.facts(8, 32), true)
            .get(0); // prepared by hand: its join checks

    assertThat(machinesOf(launchJoining("v1.22.3"))).containsExactlyInAnyOrder(v120, unsaid);
    Response refused = launchJoining("v1.22.3");
    assertThat(refused.status()).isEqualTo(503);
    assertThat(refused.errorCode()).isEqualTo("InsufficientCapacity");
    assertThat(refused.body().getString("message"))
        .contains(
            "whose kubelet the control plane accepts (v1.20 to v1.22; 2 other(s) passed over)");
    assertThat(refused.body().getJsonObject("details").getJsonObject("kubeletVersions"))
        .isEqualTo(new JsonObject().put("oldest", "1.20").put("newest", "1.22"));
    assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'warm'")).isEqualTo(2);
    // Each machine passed over says why on its own timeline, once however often launches retry.
    assertThat(launchJoining("v1.22.3").status()).isEqualTo(503);
    for (String passedOver : List.of(v124, v119)) {
      assertThat(
              fx.count(
                  "SELECT count(*) FROM events WHERE type = 'KubeletNotAccepted' AND machine_id = '"
                      + passedOver
                      + "'"))
          .isEqualTo(1);
    }
    assertThat(fx.client.get("/v1/events?machineId=" + v124, ApiFixture.ADMIN).body().encode())
        .contains(
            "its kubelet v1.24 is outside what the join's control plane accepts (v1.20 to v1.22)");
    assertThat(fx.count("SELECT count(*) FROM events WHERE type = 'KubeletNotAccepted'"))
        .isEqualTo(2);

    assertThat(machinesOf(launchJoining("v1.24.1+k3s1"))).containsExactly(v124);
    assertThat(machinesOf(launchJoining(null)))
        .containsExactly(v119); // no version: nothing is passed over
  }

  @Test
  void machineLabelsApplyToPreparingAndStandbyMachinesAlike() {
    fx.registerMachines(1, ApiFixture.facts(8, 32), false, zone("rack-1"));
    String standby = fx.registerMachines(1, ApiFixture.facts(8, 32), false, zone("rack-2")).get(0);
    Response fromStandby = launch(request(zone("rack-2")).put("allowStandby", true));
    assertThat(fromStandby.status()).isEqualTo(201);
    assertThat(machineOf(fromStandby)).isEqualTo(standby);
    assertThat(fx.openCommands(standby, "prepare")).hasSize(1);

    // Two machines of another shape being prepared by its pool, one per zone.
    fx.registerMachines(1, ApiFixture.facts(4, 16), false, zone("rack-1"));
    String preparing =
        fx.registerMachines(1, ApiFixture.facts(4, 16), false, zone("rack-2")).get(0);
    fx.client.put(
        "/v1/pools/x86-4c-16g",
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 2).put("maxWarm", 2));
    fx.reconcilePools();
    assertThat(
            fx.count(
                "SELECT count(*) FROM machines WHERE shape = 'x86-4c-16g' AND state = 'preparing'"))
        .isEqualTo(2);
    Response fromPreparing =
        launch(
            new JsonObject()
                .put("shape", "x86-4c-16g")
                .put("allowPreparing", true)
                .put("machineLabels", zone("rack-2")));
    assertThat(fromPreparing.status()).isEqualTo(201);
    assertThat(machineOf(fromPreparing)).isEqualTo(preparing);
    assertThat(
            launch(
                    new JsonObject()
                        .put("shape", "x86-4c-16g")
                        .put("allowPreparing", true)
                        .put("machineLabels", zone("rack-2")))
                .status())
        .isEqualTo(503);
  }

  @Test
  void concurrentLaunchesWithMachineLabelsTakeTheOneMatchingMachineOnce() {
    fx.registerMachines(20, ApiFixture.facts(8, 32), true, zone("rack-1"));
    String only = fx.registerMachines(1, ApiFixture.facts(8, 32), true, zone("rack-9")).get(0);

    List<Future<Response>> launches = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      launches.add(
          fx.client.send(
              HttpMethod.POST,
              "/v1/instances",
              client,
              request(zone("rack-9")).put("clientToken", "tok-" + i)));
    }
    Future.all(launches).await();

    List<Response> launched =
        launches.stream().map(Future::result).filter(r -> r.status() == 201).toList();
    assertThat(launched).hasSize(1);
    assertThat(machineOf(launched.get(0))).isEqualTo(only);
    assertThat(
            launches.stream()
                .map(Future::result)
                .filter(r -> r.status() == 503)
                .filter(r -> "InsufficientCapacity".equals(r.errorCode())))
        .hasSize(19);
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(1);
    assertThat(fx.count("SELECT count(*) FROM launches")).isEqualTo(1);
    assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'joining'")).isEqualTo(1);
    assertThat(
            fx.count("SELECT count(*) FROM machines WHERE state = 'warm' AND instance_id IS NULL"))
        .isEqualTo(20);
  }

  @Test
  void machineLabelsAreValidatedAsLabels() {
    fx.registerMachines(1, ApiFixture.facts(8, 32), true, zone("rack-1"));
    Response badKey = launch(request(new JsonObject().put("not a key", "x")));
    assertThat(badKey.status()).isEqualTo(400);
    assertThat(badKey.body().getString("field")).startsWith("machineLabels");
    Response notAString = launch(request(new JsonObject().put(ZONE, 1)));
    assertThat(notAString.status()).isEqualTo(400);
    assertThat(notAString.body().getString("field")).startsWith("machineLabels");
    assertThat(fx.count("SELECT count(*) FROM launches")).isZero();
  }

  /**
   * Pre-joined standby (the joins reported as an agent would): what a standby launch and a launch
   * that takes pre-joined machines refuse, launches racing for the same pre-joined machines, a
   * retry with the same client token, and a standby launch larger than what is warm. The channel's
   * part (a real join leaving the machine pre-joined, no second join) is {@code ChannelTest}'s.
   */
  @Nested
  class PreJoined {
    private static final String SHAPE = "x86-8c-32g";
    private static final JsonObject CLUSTER =
        new JsonObject()
            .put("apiServer", "10.0.0.2:6443")
            .put("caCertHash", "sha256:" + "ab".repeat(32))
            .put("bootstrapToken", "abcdef.0123456789abcdef");

    private static JsonObject standby(int count) {
      return new JsonObject()
          .put("shape", SHAPE)
          .put("minCount", count)
          .put("standby", true)
          .put("kubernetes", CLUSTER);
    }

    private static JsonObject takingPreJoined() {
      return new JsonObject()
          .put("shape", SHAPE)
          .put("allowPreJoined", true)
          .put("kubernetes", CLUSTER);
    }

    /** {@code n} warm machines launched as standby and their joins reported: pre-joined. */
    private List<String> preJoined(int n) {
      List<String> machines = fx.registerMachines(n, ApiFixture.facts(8, 32), true);
      Response r = launch(standby(n));
      assertThat(r.status()).as(r.raw()).isEqualTo(201);
      for (String m : machines) {
        fx.report(fx.openCommands(m, "join").get(0), true);
      }
      assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'pre-joined'")).isEqualTo(n);
      return machines;
    }

    @Test
    void badPreJoiningInputIsRefusedNamingTheFieldAndWritesNothing() {
      fx.registerMachines(1, ApiFixture.facts(8, 32), true);
      String script = "ZWNobyBoaQ=="; // echo hi

      assertRefused(
          new JsonObject().put("shape", SHAPE).put("standby", true).put("userData", script),
          "userData");
      assertRefused(new JsonObject().put("shape", SHAPE).put("standby", true), "kubernetes");
      assertRefused(new JsonObject().put("shape", SHAPE).put("allowPreJoined", true), "kubernetes");
      assertRefused(standby(1).put("allowPreJoined", true), "allowPreJoined");
      assertRefused(standby(1).put("standby", "yes"), "standby"); // the contract's own check

      assertThat(fx.count("SELECT count(*) FROM launches")).isZero();
      assertThat(fx.count("SELECT count(*) FROM instances")).isZero();
      assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'warm'")).isOne();
    }

    private void assertRefused(JsonObject body, String field) {
      Response r = launch(body);
      assertThat(r.status()).as(r.raw()).isEqualTo(400);
      assertThat(r.errorCode()).isEqualTo("ValidationError");
      assertThat(r.body().getString("field")).as(r.raw()).contains(field);
    }

    @Test
    void aStandbyLaunchLargerThanWhatIsWarmIsInsufficientCapacityAndClaimsNothing() {
      fx.registerMachines(2, ApiFixture.facts(8, 32), true);

      Response r = launch(standby(3));

      assertThat(r.status()).isEqualTo(503);
      assertThat(r.errorCode()).isEqualTo("InsufficientCapacity");
      assertThat(
              r.body()
                  .getJsonObject("details")
                  .getJsonObject("available")
                  .getJsonObject(SHAPE)
                  .getInteger("warm"))
          .isEqualTo(2);
      assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'warm'")).isEqualTo(2);
      assertThat(fx.count("SELECT count(*) FROM instances")).isZero();
      assertThat(fx.count("SELECT count(*) FROM commands")).isZero();
    }

    @Test
    void launchesRacingForPreJoinedMachinesNeverShareOne() {
      List<String> preJoined = preJoined(8);
      fx.registerMachines(4, ApiFixture.facts(8, 32), true);

      // 30 launches at once for 12 machines: the 8 pre-joined go first, then the warm ones.
      List<Future<Response>> launches = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        launches.add(
            fx.client.send(
                HttpMethod.POST,
                "/v1/instances",
                client,
                takingPreJoined().put("clientToken", "race-" + i)));
      }
      Future.all(launches).await();

      Set<String> machines = new HashSet<>();
      int handedOver = 0;
      for (Future<Response> f : launches) {
        Response r = f.result();
        if (r.status() == 503) {
          assertThat(r.errorCode()).isEqualTo("InsufficientCapacity");
          continue;
        }
        assertThat(r.status()).as(r.raw()).isEqualTo(201);
        JsonObject instance = r.body().getJsonArray("instances").getJsonObject(0);
        assertThat(machines.add(instance.getString("machineId")))
            .as("machine handed out twice")
            .isTrue();
        if (instance.getBoolean("preJoined")) {
          handedOver++;
          assertThat(preJoined).contains(instance.getString("machineId"));
          assertThat(instance.getString("state")).isEqualTo("running");
        }
      }
      assertThat(machines).hasSize(12);
      assertThat(handedOver).isEqualTo(8);
      // The database agrees: no machine under two live instances, every standby instance ended.
      assertThat(
              fx.count(
                  """
                  SELECT count(*) FROM (SELECT machine_id FROM instances
                    WHERE state IN ('pending', 'running', 'shutting-down')
                    GROUP BY machine_id HAVING count(*) > 1) twice"""))
          .isZero();
      assertThat(fx.count("SELECT count(*) FROM instances WHERE standby AND state = 'terminated'"))
          .isEqualTo(8);
      assertThat(machinesByState()).isEqualTo(Map.of("in-use", 8L, "joining", 4L));
      assertThat(
              fx.count("SELECT count(*) FROM commands WHERE type = 'join' AND status = 'queued'"))
          .isEqualTo(4);
    }

    private Map<String, Long> machinesByState() {
      Map<String, Long> states = new HashMap<>();
      fx.db()
          .query("SELECT state, count(*) AS n FROM machines GROUP BY state")
          .execute()
          .await()
          .forEach(r -> states.put(r.getString("state"), r.getLong("n")));
      return states;
    }

    @Test
    void aRetryWithTheSameClientTokenReplaysAndTakesNoSecondMachine() {
      preJoined(2);
      JsonObject body = takingPreJoined().put("clientToken", "claim-1");

      // Twice at once, then once more: one launch, one machine.
      List<Future<Response>> together =
          List.of(
              fx.client.send(HttpMethod.POST, "/v1/instances", client, body),
              fx.client.send(HttpMethod.POST, "/v1/instances", client, body));
      Future.all(together).await();
      Response again = launch(body);

      Set<Integer> statuses = new HashSet<>();
      together.forEach(f -> statuses.add(f.result().status()));
      assertThat(statuses).containsExactlyInAnyOrder(201, 200);
      JsonObject first = together.get(0).result().body();
      assertThat(again.status()).isEqualTo(200);
      assertThat(again.body()).isEqualTo(first);
      assertThat(together.get(1).result().body()).isEqualTo(first);
      assertThat(first.getJsonArray("instances").getJsonObject(0).getBoolean("preJoined")).isTrue();
      assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'pre-joined'")).isOne();
      assertThat(fx.count("SELECT count(*) FROM instances WHERE pre_joined")).isOne();
    }
  }
}
