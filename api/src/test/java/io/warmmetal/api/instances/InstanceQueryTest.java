package io.warmmetal.api.instances;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** DescribeInstances: filters and cursor pagination. */
@ExtendWith(VertxExtension.class)
class InstanceQueryTest {
  private static ApiFixture fx;
  private static String reader;
  private static final List<String> small = new ArrayList<>();
  private static final List<String> big = new ArrayList<>();

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
    reader = fx.token("read-only");
    String client = fx.token("client");
    fx.registerMachines(7, ApiFixture.facts(4, 16), true);
    fx.registerMachines(3, ApiFixture.facts(32, 128), true);
    for (int i = 0; i < 7; i++) {
      small.add(
          fx.client
              .post(
                  "/v1/instances",
                  client,
                  new JsonObject()
                      .put("shape", "x86-4c-16g")
                      .put(
                          "labels",
                          new JsonObject()
                              .put("team", i % 2 == 0 ? "ml" : "web")
                              .put("idx", "n" + i)))
              .body()
              .getJsonArray("instances")
              .getJsonObject(0)
              .getString("id"));
    }
    for (int i = 0; i < 3; i++) {
      big.add(
          fx.client
              .post("/v1/instances", client, new JsonObject().put("shape", "x86-32c-128g"))
              .body()
              .getJsonArray("instances")
              .getJsonObject(0)
              .getString("id"));
    }
    fx.client.delete("/v1/instances/" + big.get(0), client);
  }

  @AfterAll
  static void stop() {
    fx.close();
  }

  private static List<String> ids(String query) {
    Response r = fx.client.get("/v1/instances" + query, reader);
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    List<String> out = new ArrayList<>();
    r.body().getJsonArray("items").forEach(i -> out.add(((JsonObject) i).getString("id")));
    return out;
  }

  @Test
  void filtersByShapeStateMachineAndLabels() {
    assertThat(ids("?shape=x86-32c-128g")).containsExactlyElementsOf(big);
    assertThat(ids("?state=shutting-down")).containsExactly(big.get(0));
    assertThat(ids("?state=pending&shape=x86-32c-128g")).containsExactly(big.get(1), big.get(2));
    assertThat(ids("?labelSelector=team%3Dml"))
        .containsExactly(small.get(0), small.get(2), small.get(4), small.get(6));
    assertThat(ids("?labelSelector=team!%3Dml,team"))
        .containsExactly(small.get(1), small.get(3), small.get(5));
    assertThat(ids("?labelSelector=!team")).containsExactlyElementsOf(big);
    String machine =
        fx.client.get("/v1/instances/" + small.get(3), reader).body().getString("machineId");
    assertThat(ids("?machineId=" + machine)).containsExactly(small.get(3));
  }

  @Test
  void pagesThroughEverythingOnceInOrder() {
    List<String> seen = new ArrayList<>();
    String cursor = null;
    int pages = 0;
    do {
      Response r =
          fx.client.get(
              "/v1/instances?limit=3" + (cursor == null ? "" : "&cursor=" + cursor), reader);
      JsonArray items = r.body().getJsonArray("items");
      items.forEach(i -> seen.add(((JsonObject) i).getString("id")));
      cursor = r.body().getString("nextCursor");
      pages++;
    } while (cursor != null);
    List<String> all = new ArrayList<>(small);
    all.addAll(big);
    assertThat(seen).containsExactlyElementsOf(all);
    assertThat(pages).isEqualTo(4);
  }

  @Test
  void aMalformedSelectorIsA400NamingIt() {
    Response r = fx.client.get("/v1/instances?labelSelector=team%3D%3D%3Dx", reader);
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.body().getString("field")).isEqualTo("labelSelector");
  }
}
