package io.warmmetal.api.machines;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The inventory: registration, identity, filters, pagination, cordons, retirement, shapes and their
 * counts (by state, and per offering: by the values of a zone label and a region label).
 */
@ExtendWith(VertxExtension.class)
class MachinesTest {
  private static final String ZONE = "topology.kubernetes.io/zone";
  private static final String REGION = "topology.kubernetes.io/region";

  private ApiFixture fx;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
  }

  @AfterEach
  void stop() {
    fx.close();
  }

  private Response register(JsonObject body) {
    return fx.client.post("/v1/machines", ApiFixture.ADMIN, body);
  }

  @Test
  void registrationDerivesTheShapeAndKeepsTheFacts() {
    JsonObject facts =
        ApiFixture.gpuFacts(64, 512, 4, "NVIDIA H100 80GB HBM3")
            .put(
                "disks",
                new JsonArray()
                    .add(
                        new JsonObject()
                            .put("name", "nvme0n1")
                            .put("sizeGiB", 3576)
                            .put("type", "nvme")))
            .put(
                "nics",
                new JsonArray()
                    .add(
                        new JsonObject()
                            .put("name", "eth0")
                            .put("mac", "52:54:00:12:34:56")
                            .put("speedMbps", 25000)));
    Response r =
        register(
            new JsonObject()
                .put("name", "gpu-1")
                .put("address", "10.1.0.7")
                .put("facts", facts)
                .put("labels", new JsonObject().put("rack", "r7"))
                .put("prepared", true)
                .put(
                    "identity",
                    new JsonObject()
                        .put("systemUuid", "4c4c4544-0042")
                        .put("primaryMac", "52:54:00:12:34:56")));
    assertThat(r.status()).isEqualTo(201);
    JsonObject m = r.body();
    assertThat(m.getString("shape")).isEqualTo("x86-64c-512g-4xh100");
    assertThat(m.getString("state")).isEqualTo("warm");
    assertThat(m.getJsonObject("facts")).isEqualTo(facts);
    assertThat(m.getJsonObject("labels").getString("rack")).isEqualTo("r7");

    JsonObject shape = fx.client.get("/v1/shapes/x86-64c-512g-4xh100", ApiFixture.ADMIN).body();
    assertThat(shape.getInteger("cpus")).isEqualTo(64);
    assertThat(shape.getInteger("memoryGiB")).isEqualTo(512);
    assertThat(shape.getJsonArray("gpus").getJsonObject(0))
        .isEqualTo(new JsonObject().put("model", "h100").put("count", 4));
    assertThat(shape.getJsonObject("counts").getInteger("warm")).isEqualTo(1);

    // The same hardware cannot be registered twice.
    Response again =
        register(
            new JsonObject()
                .put("name", "gpu-1b")
                .put("facts", facts)
                .put("identity", new JsonObject().put("systemUuid", "4c4c4544-0042")));
    assertThat(again.status()).isEqualTo(409);
    assertThat(again.body().getString("field")).isEqualTo("identity.systemUuid");
    assertThat(fx.count("SELECT count(*) FROM machines")).isEqualTo(1);
  }

  @Test
  void shapesCountMachinesByState() {
    fx.registerMachines(3, ApiFixture.facts(8, 32), true);
    fx.registerMachines(2, ApiFixture.facts(8, 32), false);
    fx.registerMachines(1, ApiFixture.facts(2, 4).put("arch", "aarch64"), true);
    fx.client.post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", "x86-8c-32g"));

    JsonObject x86 = shape("", "x86-8c-32g");
    assertThat(x86.getJsonObject("counts"))
        .isEqualTo(new JsonObject().put("warm", 2).put("joining", 1).put("standby", 2));
    assertThat(x86.getInteger("total")).isEqualTo(5);
    assertThat(fx.client.get("/v1/shapes/arm-2c-4g", ApiFixture.ADMIN).status()).isEqualTo(200);
    assertThat(fx.client.get("/v1/shapes/arm-4c-4g", ApiFixture.ADMIN).status()).isEqualTo(404);
  }

  private static JsonObject offering(String zone, String region, JsonObject counts) {
    return new JsonObject().put("zone", zone).put("region", region).put("counts", counts);
  }

  private JsonObject shape(String query, String name) {
    Response r = fx.client.get("/v1/shapes" + query, ApiFixture.ADMIN);
    assertThat(r.status()).isEqualTo(200);
    return r.body().getJsonArray("items").stream()
        .map(JsonObject.class::cast)
        .filter(s -> s.getString("name").equals(name))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void aShapesDiskIsTheSmallestTotalAmongItsMachines() {
    JsonArray big =
        new JsonArray()
            .add(new JsonObject().put("name", "nvme0n1").put("sizeGiB", 1788))
            .add(new JsonObject().put("name", "nvme1n1").put("sizeGiB", 1788));
    JsonArray small = new JsonArray().add(new JsonObject().put("name", "sda").put("sizeGiB", 480));
    fx.registerMachines(1, ApiFixture.facts(8, 32).put("disks", big), true);
    fx.registerMachines(1, ApiFixture.facts(8, 32).put("disks", small), true);
    fx.registerMachines(1, ApiFixture.facts(4, 16), true); // reports no disks
    assertThat(shape("", "x86-8c-32g").getLong("diskGiB")).isEqualTo(480L);
    assertThat(shape("", "x86-4c-16g").getValue("diskGiB")).isNull();
    assertThat(shape("", "x86-4c-16g").containsKey("diskGiB")).isTrue();
  }

  @Test
  void offeringsGroupAShapesMachinesByZoneAndRegion() {
    JsonObject rack1 = new JsonObject().put(ZONE, "rack-1").put(REGION, "room-1").put("team", "a");
    JsonObject rack2 = new JsonObject().put(ZONE, "rack-2").put(REGION, "room-1");
    fx.registerMachines(2, ApiFixture.facts(8, 32), true, rack1);
    fx.registerMachines(
        1, ApiFixture.facts(8, 32), false, rack1.copy().put("team", "b")); // standby
    fx.registerMachines(2, ApiFixture.facts(8, 32), true, rack2);
    fx.registerMachines(
        1, ApiFixture.facts(8, 32), true, new JsonObject().put(ZONE, "rack-3")); // no region
    fx.registerMachines(1, ApiFixture.facts(8, 32), true); // no labels at all
    fx.registerMachines(1, ApiFixture.facts(2, 4).put("arch", "aarch64"), true);
    String retired = fx.registerMachines(1, ApiFixture.facts(8, 32), true, rack2).get(0);
    assertThat(
            fx.client.post("/v1/machines/" + retired + "/retire", ApiFixture.ADMIN, null).status())
        .isEqualTo(200);
    JsonObject launched =
        fx.client
            .post(
                "/v1/instances",
                ApiFixture.ADMIN,
                new JsonObject()
                    .put("shape", "x86-8c-32g")
                    .put("machineLabels", new JsonObject().put(ZONE, "rack-2")))
            .body();
    assertThat(launched.getJsonArray("instances")).hasSize(1);

    JsonObject x86 = shape("", "x86-8c-32g");
    // What was there stays as it was: counts by state over all the shape's machines, total without
    // the retired.
    assertThat(x86.getJsonObject("counts"))
        .isEqualTo(
            new JsonObject().put("warm", 5).put("standby", 1).put("joining", 1).put("retired", 1));
    assertThat(x86.getInteger("total")).isEqualTo(7);
    assertThat(x86.getJsonArray("offerings"))
        .isEqualTo(
            new JsonArray()
                .add(
                    offering("rack-1", "room-1", new JsonObject().put("warm", 2).put("standby", 1)))
                .add(
                    offering(
                        "rack-2",
                        "room-1",
                        new JsonObject().put("warm", 1).put("joining", 1).put("retired", 1)))
                .add(offering("rack-3", null, new JsonObject().put("warm", 1)))
                .add(offering(null, null, new JsonObject().put("warm", 1))));
    assertThat(shape("", "arm-2c-4g").getJsonArray("offerings"))
        .isEqualTo(new JsonArray().add(offering(null, null, new JsonObject().put("warm", 1))));

    // One shape reads the same, by name and by alias.
    assertThat(fx.client.get("/v1/shapes/x86-8c-32g", ApiFixture.ADMIN).body()).isEqualTo(x86);
    fx.client.call(
        HttpMethod.PATCH,
        "/v1/shapes/x86-8c-32g",
        ApiFixture.ADMIN,
        new JsonObject().put("alias", "medium"));
    assertThat(
            fx.client.get("/v1/shapes/medium", ApiFixture.ADMIN).body().getJsonArray("offerings"))
        .isEqualTo(x86.getJsonArray("offerings"));
  }

  @Test
  void offeringsByTheCallersZoneAndRegionLabels() {
    fx.registerMachines(
        2,
        ApiFixture.facts(8, 32),
        true,
        new JsonObject().put("rack", "r1").put("example.com/room", "east").put(ZONE, "z"));
    fx.registerMachines(
        1, ApiFixture.facts(8, 32), true, new JsonObject().put("rack", "r2").put(ZONE, "z"));
    fx.registerMachines(1, ApiFixture.facts(8, 32), false, new JsonObject().put("rack", "r2"));

    JsonObject byRack = shape("?zoneLabel=rack&regionLabel=example.com%2Froom", "x86-8c-32g");
    assertThat(byRack.getJsonArray("offerings"))
        .isEqualTo(
            new JsonArray()
                .add(offering("r1", "east", new JsonObject().put("warm", 2)))
                .add(offering("r2", null, new JsonObject().put("warm", 1).put("standby", 1))));
    assertThat(
            fx.client
                .get(
                    "/v1/shapes/x86-8c-32g?zoneLabel=rack&regionLabel=example.com/room",
                    ApiFixture.ADMIN)
                .body())
        .isEqualTo(byRack);

    // Only the zone label given: the region label stays the well-known one (which these machines
    // lack).
    assertThat(shape("?zoneLabel=example.com/room", "x86-8c-32g").getJsonArray("offerings"))
        .isEqualTo(
            new JsonArray()
                .add(offering("east", null, new JsonObject().put("warm", 2)))
                .add(offering(null, null, new JsonObject().put("warm", 1).put("standby", 1))));
    // Neither given: the well-known ones.
    assertThat(shape("", "x86-8c-32g").getJsonArray("offerings"))
        .isEqualTo(
            new JsonArray()
                .add(offering("z", null, new JsonObject().put("warm", 3)))
                .add(offering(null, null, new JsonObject().put("standby", 1))));
  }

  @Test
  void offeringLabelsThatAreNoLabelKeysAreRefusedNamingTheParameter() {
    fx.registerMachines(1, ApiFixture.facts(8, 32), true);
    for (String query :
        new String[] {
          "?zoneLabel=bad%20key",
          "?zoneLabel=",
          "?zoneLabel=-rack",
          "?regionLabel=UPPER.example%2Froom",
          "?zoneLabel=rack&regionLabel=a%2Fb%2Fc"
        }) {
      String parameter = query.contains("regionLabel") ? "regionLabel" : "zoneLabel";
      for (String path : new String[] {"/v1/shapes", "/v1/shapes/x86-8c-32g"}) {
        Response r = fx.client.get(path + query, ApiFixture.ADMIN);
        assertThat(r.status()).as(path + query).isEqualTo(400);
        assertThat(r.errorCode()).isEqualTo("ValidationError");
        assertThat(r.body().getString("field")).as(path + query).isEqualTo(parameter);
      }
    }
  }

  @Test
  void listsWithFiltersAndPages() {
    List<String> warm = fx.registerMachines(4, ApiFixture.facts(8, 32), true);
    List<String> standby = fx.registerMachines(3, ApiFixture.facts(8, 32), false);
    fx.client.post("/v1/machines/" + warm.get(1) + "/cordon", ApiFixture.ADMIN, null);

    assertThat(ids("?state=standby")).containsExactlyElementsOf(standby);
    assertThat(ids("?cordoned=true")).containsExactly(warm.get(1));
    assertThat(ids("?state=warm&cordoned=false"))
        .containsExactly(warm.get(0), warm.get(2), warm.get(3));
    assertThat(ids("?shape=x86-8c-32g")).hasSize(7);

    List<String> all = new ArrayList<>();
    String cursor = null;
    do {
      Response page =
          fx.client.get(
              "/v1/machines?limit=2" + (cursor == null ? "" : "&cursor=" + cursor),
              ApiFixture.ADMIN);
      page.body().getJsonArray("items").forEach(m -> all.add(((JsonObject) m).getString("id")));
      cursor = page.body().getString("nextCursor");
    } while (cursor != null);
    List<String> expected = new ArrayList<>(warm);
    expected.addAll(standby);
    assertThat(all).containsExactlyElementsOf(expected);
  }

  private List<String> ids(String query) {
    List<String> out = new ArrayList<>();
    fx.client
        .get("/v1/machines" + query, ApiFixture.ADMIN)
        .body()
        .getJsonArray("items")
        .forEach(m -> out.add(((JsonObject) m).getString("id")));
    return out;
  }

  @Test
  void cordonAndRetireAreIdempotentAndRetiredIsFinal() {
    String id = fx.registerMachines(1, ApiFixture.facts(8, 32), false).get(0);
    assertThat(
            fx.client
                .post("/v1/machines/" + id + "/cordon", ApiFixture.ADMIN, null)
                .body()
                .getBoolean("cordoned"))
        .isTrue();
    assertThat(fx.client.post("/v1/machines/" + id + "/cordon", ApiFixture.ADMIN, null).status())
        .isEqualTo(200);
    assertThat(fx.count("SELECT count(*) FROM events WHERE type = 'MachineCordoned'")).isEqualTo(1);

    assertThat(
            fx.client
                .post("/v1/machines/" + id + "/retire", ApiFixture.ADMIN, null)
                .body()
                .getString("state"))
        .isEqualTo("retired");
    assertThat(fx.client.post("/v1/machines/" + id + "/retire", ApiFixture.ADMIN, null).status())
        .isEqualTo(200);
    Response uncordon = fx.client.post("/v1/machines/" + id + "/uncordon", ApiFixture.ADMIN, null);
    assertThat(uncordon.status()).isEqualTo(409);
    assertThat(uncordon.errorCode()).isEqualTo("InvalidState");
    assertThat(
            fx.client
                .post("/v1/machines/m-0000000000000000/retire", ApiFixture.ADMIN, null)
                .status())
        .isEqualTo(404);
  }

  @Test
  void shapeAliasesAndPrices() {
    fx.registerMachines(1, ApiFixture.facts(8, 32), true);
    fx.registerMachines(1, ApiFixture.facts(4, 16), true);
    Response set =
        fx.client.call(
            HttpMethod.PATCH,
            "/v1/shapes/x86-8c-32g",
            ApiFixture.ADMIN,
            new JsonObject().put("alias", "medium").put("pricePerHour", 0.42));
    assertThat(set.body().getDouble("pricePerHour")).isEqualTo(0.42);
    assertThat(fx.client.get("/v1/shapes/medium", ApiFixture.ADMIN).body().getString("name"))
        .isEqualTo("x86-8c-32g");
    Response taken =
        fx.client.call(
            HttpMethod.PATCH,
            "/v1/shapes/x86-4c-16g",
            ApiFixture.ADMIN,
            new JsonObject().put("alias", "medium"));
    assertThat(taken.status()).isEqualTo(409);
    Response nameClash =
        fx.client.call(
            HttpMethod.PATCH,
            "/v1/shapes/x86-4c-16g",
            ApiFixture.ADMIN,
            new JsonObject().put("alias", "x86-8c-32g"));
    assertThat(nameClash.status()).isEqualTo(409);
    Response cleared =
        fx.client.call(
            HttpMethod.PATCH,
            "/v1/shapes/medium",
            ApiFixture.ADMIN,
            new JsonObject().putNull("alias"));
    assertThat(cleared.body().getString("alias")).isNull();
    assertThat(cleared.body().getDouble("pricePerHour")).isEqualTo(0.42);
  }
}
