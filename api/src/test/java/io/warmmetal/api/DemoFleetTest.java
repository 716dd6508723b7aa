package io.warmmetal.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.enrollment.AgentProcessTest;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.protocol.testing.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code --demo N} ({@code WARMMETAL_DEMO_MACHINES}): the API runs the packaged fleet simulator as
 * its child, whose machines enroll with nothing copied by hand, wait in standby, warm up when a
 * pool asks and take a launch; the child goes when the API stops.
 */
@ExtendWith(VertxExtension.class)
class DemoFleetTest {
  private static final Path FLEET_JAR = AgentProcessTest.moduleJar("fleet");

  private static long machines(ApiFixture fx, String state) {
    return fx.count(
        "SELECT count(*) FROM machines WHERE shape = $1 AND state = $2", DemoFleet.shape(), state);
  }

  private static List<ProcessHandle> fleetChildren() {
    return ProcessHandle.current()
        .children()
        .filter(p -> p.info().commandLine().orElse("").contains(DemoFleet.JAR))
        .toList();
  }

  @Test
  @Tag("processes")
  void theDemoFleetEnrollsWarmsUpTakesALaunchAndStopsWithTheApi(Vertx vertx) throws Exception {
    assertThat(FLEET_JAR)
        .as("the fleet jar (mvn -B verify -Pprocesses packages it first)")
        .exists();
    List<ProcessHandle> fleet;
    try (ApiFixture fx =
        ApiFixture.start(
            vertx,
            Map.of("WARMMETAL_DEMO_MACHINES", "3", "WARMMETAL_FLEET_JAR", FLEET_JAR.toString()))) {
      fleet = fleetChildren();
      assertThat(fleet).as("one fleet simulator, the API's child").hasSize(1);
      Path tokenFile = fx.dataDir.resolve("demo/enrollment-token");
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(tokenFile)))
          .isEqualTo("rw-------");

      Await.until(
          "3 demo machines in standby",
          () -> machines(fx, "standby") == 3,
          60_000,
          () -> tail(fx.dataDir.resolve("demo/fleet.log")));
      var pool =
          fx.client.put(
              "/v1/pools/" + DemoFleet.shape(),
              ApiFixture.ADMIN,
              new JsonObject().put("minWarm", 2).put("maxWarm", 2));
      assertThat(pool.status()).as(pool.raw()).isEqualTo(200);
      fx.reconcilePools();
      Await.until(
          "2 demo machines warm",
          () -> machines(fx, "warm") == 2,
          30_000,
          () -> tail(fx.dataDir.resolve("demo/fleet.log")));

      var launch =
          fx.client.post(
              "/v1/instances",
              ApiFixture.ADMIN,
              new JsonObject()
                  .put("shape", DemoFleet.shape())
                  .put("minCount", 1)
                  .put("maxCount", 1));
      assertThat(launch.status()).as(launch.raw()).isEqualTo(201);
      String instance = launch.body().getJsonArray("instances").getJsonObject(0).getString("id");
      Await.until(
          "the instance running on a simulated machine",
          () ->
              fx.count(
                      "SELECT count(*) FROM instances WHERE id = $1 AND state = 'running'",
                      instance)
                  == 1,
          30_000);
    }
    for (ProcessHandle child : fleet) {
      assertThat(child.isAlive()).as("the fleet simulator after the API stopped").isFalse();
    }
  }

  @Test
  void aDemoWithoutTheFleetJarDoesNotStartAndSaysWhatToBuild(Vertx vertx) {
    Path missing = Path.of("no-such-dir", DemoFleet.JAR).toAbsolutePath();
    assertThatThrownBy(
            () ->
                ApiFixture.start(
                    vertx,
                    Map.of(
                        "WARMMETAL_DEMO_MACHINES", "2", "WARMMETAL_FLEET_JAR", missing.toString())))
        .hasMessageContaining("--demo needs the fleet simulator's jar")
        .hasMessageContaining("WARMMETAL_FLEET_JAR")
        .hasMessageContaining(missing.toString());
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (Exception e) {
      return "(no fleet log: " + e.getMessage() + ")";
    }
  }
}
