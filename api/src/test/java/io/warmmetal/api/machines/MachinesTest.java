package io.warmmetal.api.machines;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
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

/** The inventory: registration, identity, filters, pagination, cordons, retirement, shapes and their counts. */
@ExtendWith(VertxExtension.class)
class MachinesTest {
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
    JsonObject facts = ApiFixture.gpuFacts(64, 512, 4, "NVIDIA H100 80GB HBM3")
        .put("disks", new io.vertx.core.json.JsonArray().add(new JsonObject().put("name", "nvme0n1")
            .put("sizeGiB", 3576).put("type", "nvme")))
        .put("nics", new io.vertx.core.json.JsonArray().add(new JsonObject().put("name", "eth0")
            .put("mac", "52:54:00:12:34:56").put("speedMbps", 25000)));
    Response r = register(new JsonObject().put("name", "gpu-1").put("address", "10.1.0.7").put("facts", facts)
        .put("labels", new JsonObject().put("rack", "r7")).put("prepared", true)
        .put("identity", new JsonObject().put("systemUuid", "4c4c4544-0042").put("primaryMac", "52:54:00:12:34:56")));
    assertThat(r.status()).isEqualTo(201);
    JsonObject m = r.body();
    assertThat(m.getString("shape")).isEqualTo("x86-64c-512g-4xh100");
    assertThat(m.getString("state")).isEqualTo("warm");
    assertThat(m.getJsonObject("facts")).isEqualTo(facts);
    assertThat(m.getJsonObject("labels").getString("rack")).isEqualTo("r7");

    JsonObject shape = fx.client.get("/v1/shapes/x86-64c-512g-4xh100", ApiFixture.ADMIN).body();
    assertThat(shape.getInteger("cpus")).isEqualTo(64);
    assertThat(shape.getInteger("memoryGiB")).isEqualTo(512);
    assertThat(shape.getJsonArray("gpus").getJsonObject(0)).isEqualTo(new JsonObject().put("model", "h100")
        .put("count", 4));
    assertThat(shape.getJsonObject("counts").getInteger("warm")).isEqualTo(1);

    // The same hardware cannot be registered twice.
    Response again = register(new JsonObject().put("name", "gpu-1b").put("facts", facts)
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

    JsonObject x86 = fx.client.get("/v1/shapes", ApiFixture.ADMIN).body().getJsonArray("items").stream()
        .map(JsonObject.class::cast).filter(s -> s.getString("name").equals("x86-8c-32g")).findFirst().orElseThrow();
    assertThat(x86.getJsonObject("counts")).isEqualTo(new JsonObject().put("warm", 2).put("joining", 1)
        .put("standby", 2));
    assertThat(x86.getInteger("total")).isEqualTo(5);
    assertThat(fx.client.get("/v1/shapes/arm-2c-4g", ApiFixture.ADMIN).status()).isEqualTo(200);
    assertThat(fx.client.get("/v1/shapes/arm-4c-4g", ApiFixture.ADMIN).status()).isEqualTo(404);
  }

  @Test
  void listsWithFiltersAndPages() {
    List<String> warm = fx.registerMachines(4, ApiFixture.facts(8, 32), true);
    List<String> standby = fx.registerMachines(3, ApiFixture.facts(8, 32), false);
    fx.client.post("/v1/machines/" + warm.get(1) + "/cordon", ApiFixture.ADMIN, null);

    assertThat(ids("?state=standby")).containsExactlyElementsOf(standby);
    assertThat(ids("?cordoned=true")).containsExactly(warm.get(1));
    assertThat(ids("?state=warm&cordoned=false")).containsExactly(warm.get(0), warm.get(2), warm.get(3));
    assertThat(ids("?shape=x86-8c-32g")).hasSize(7);

    List<String> all = new ArrayList<>();
    String cursor = null;
    do {
      Response page = fx.client.get("/v1/machines?limit=2" + (cursor == null ? "" : "&cursor=" + cursor),
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
    fx.client.get("/v1/machines" + query, ApiFixture.ADMIN).body().getJsonArray("items")
        .forEach(m -> out.add(((JsonObject) m).getString("id")));
    return out;
  }

  @Test
  void cordonAndRetireAreIdempotentAndRetiredIsFinal() {
    String id = fx.registerMachines(1, ApiFixture.facts(8, 32), false).get(0);
    assertThat(fx.client.post("/v1/machines/" + id + "/cordon", ApiFixture.ADMIN, null).body()
        .getBoolean("cordoned")).isTrue();
    assertThat(fx.client.post("/v1/machines/" + id + "/cordon", ApiFixture.ADMIN, null).status()).isEqualTo(200);
    assertThat(fx.count("SELECT count(*) FROM events WHERE type = 'MachineCordoned'")).isEqualTo(1);

    assertThat(fx.client.post("/v1/machines/" + id + "/retire", ApiFixture.ADMIN, null).body().getString("state"))
        .isEqualTo("retired");
    assertThat(fx.client.post("/v1/machines/" + id + "/retire", ApiFixture.ADMIN, null).status()).isEqualTo(200);
    Response uncordon = fx.client.post("/v1/machines/" + id + "/uncordon", ApiFixture.ADMIN, null);
    assertThat(uncordon.status()).isEqualTo(409);
    assertThat(uncordon.errorCode()).isEqualTo("InvalidState");
    assertThat(fx.client.post("/v1/machines/m-0000000000000000/retire", ApiFixture.ADMIN, null).status())
        .isEqualTo(404);
  }

  @Test
  void shapeAliasesAndPrices() {
    fx.registerMachines(1, ApiFixture.facts(8, 32), true);
    fx.registerMachines(1, ApiFixture.facts(4, 16), true);
    Response set = fx.client.call(HttpMethod.PATCH, "/v1/shapes/x86-8c-32g", ApiFixture.ADMIN,
        new JsonObject().put("alias", "medium").put("pricePerHour", 0.42));
    assertThat(set.body().getDouble("pricePerHour")).isEqualTo(0.42);
    assertThat(fx.client.get("/v1/shapes/medium", ApiFixture.ADMIN).body().getString("name"))
        .isEqualTo("x86-8c-32g");
    Response taken = fx.client.call(HttpMethod.PATCH, "/v1/shapes/x86-4c-16g", ApiFixture.ADMIN,
        new JsonObject().put("alias", "medium"));
    assertThat(taken.status()).isEqualTo(409);
    Response nameClash = fx.client.call(HttpMethod.PATCH, "/v1/shapes/x86-4c-16g", ApiFixture.ADMIN,
        new JsonObject().put("alias", "x86-8c-32g"));
    assertThat(nameClash.status()).isEqualTo(409);
    Response cleared = fx.client.call(HttpMethod.PATCH, "/v1/shapes/medium", ApiFixture.ADMIN,
        new JsonObject().putNull("alias"));
    assertThat(cleared.body().getString("alias")).isNull();
    assertThat(cleared.body().getDouble("pricePerHour")).isEqualTo(0.42);
  }
}
