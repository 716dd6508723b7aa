package io.warmmetal.api.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.SqlConnection;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Every state change is an event; a since-cursor reads them in order, each once. */
@ExtendWith(VertxExtension.class)
class EventsTest {
  private ApiFixture fx;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
  }

  @AfterEach
  void stop() {
    fx.close();
  }

  /** Reads from {@code since} until the log has nothing more. */
  private List<JsonObject> readAll(String query) throws InterruptedException {
    return readFrom("0", query, new ArrayList<>());
  }

  private List<JsonObject> readFrom(String start, String query, List<JsonObject> out) {
    String since = start;
    while (true) {
      Response r = fx.client.get("/v1/events?limit=3&since=" + since + query, ApiFixture.ADMIN);
      assertThat(r.status()).as(r.raw()).isEqualTo(200);
      if (r.body().getJsonArray("items").isEmpty()) {
        assertThat(r.body().getString("nextCursor"))
            .isEqualTo(since); // an empty page keeps the cursor
        return out;
      }
      r.body().getJsonArray("items").forEach(e -> out.add((JsonObject) e));
      since = r.body().getString("nextCursor");
      lastCursor = since;
    }
  }

  private String lastCursor = "0";

  @Test
  void aMachinesHistoryExplainsWhereItIs() throws Exception {
    fx.registerMachines(2, ApiFixture.facts(8, 32), true);
    JsonObject launched =
        fx.client
            .post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", "x86-8c-32g"))
            .body()
            .getJsonArray("instances")
            .getJsonObject(0);
    String instance = launched.getString("id");
    String machine = launched.getString("machineId");
    fx.report(fx.openCommands(machine, "join").get(0), true);
    fx.client.delete("/v1/instances/" + instance, ApiFixture.ADMIN);

    List<String> transitions =
        readAll("&machineId=" + machine).stream()
            .filter(e -> e.getString("type").equals("MachineState"))
            .map(e -> e.getString("from") + "→" + e.getString("to"))
            .toList();
    assertThat(transitions)
        .containsExactly("null→warm", "warm→joining", "joining→in-use", "in-use→resetting");

    List<String> instanceStates =
        readAll("&instanceId=" + instance).stream()
            .filter(e -> e.getString("type").equals("InstanceState"))
            .map(e -> e.getString("to"))
            .toList();
    assertThat(instanceStates).containsExactly("pending", "running", "shutting-down");

    List<JsonObject> all = readAll("");
    List<Long> seqs = all.stream().map(e -> Long.parseLong(e.getString("seq"))).toList();
    assertThat(seqs).doesNotHaveDuplicates();
    assertThat(all).hasSize((int) fx.count("SELECT count(*) FROM events"));
  }

  @Test
  void anEventCommittedLongAfterLaterOnesIsStillReadAndReadOnce() throws Exception {
    fx.registerMachines(1, ApiFixture.facts(8, 32), true);
    List<JsonObject> seen = new ArrayList<>();
    readFrom("0", "", seen);
    String cursor = lastCursor;

    // A transaction writes an event (taking the next seq) and stays open while others write and
    // commit theirs.
    SqlConnection slow = fx.db().getConnection().await();
    slow.query("BEGIN").execute().await();
    slow.query(
            "INSERT INTO events (type, subject, reason) VALUES ('Slow', 'slow', 'long transaction')")
        .execute()
        .await();
    List<String> later = fx.registerMachines(2, ApiFixture.facts(8, 32), true);
    // Their events are committed (readable by any other transaction), but the log holds them back —
    // not for a
    // while: for as long as the older transaction stays open, however often it is read.
    assertThat(fx.count("SELECT count(*) FROM events WHERE machine_id = $1", later.get(1)))
        .isPositive();
    for (int read = 0; read < 3; read++) {
      List<JsonObject> meanwhile = new ArrayList<>();
      readFrom(cursor, "", meanwhile);
      assertThat(meanwhile).as("nothing after the open transaction is handed out yet").isEmpty();
    }

    slow.query("COMMIT").execute().await();
    slow.close().await();
    List<JsonObject> after = new ArrayList<>();
    readFrom(cursor, "", after);
    assertThat(after).extracting(e -> e.getString("type")).containsOnlyOnce("Slow");
    assertThat(after.get(0).getString("type")).isEqualTo("Slow"); // its transaction is the oldest
    assertThat(seen.size() + after.size()).isEqualTo((int) fx.count("SELECT count(*) FROM events"));
  }
}
