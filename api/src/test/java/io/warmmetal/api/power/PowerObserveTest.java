package io.warmmetal.api.power;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiClient.Response;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.IpmiSim;
import io.warmmetal.api.testing.RedfishBmc;
import io.warmmetal.protocol.testing.Await;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Live power observations are rationed per machine and cannot hold up switching. */
@ExtendWith(VertxExtension.class)
class PowerObserveTest {

  @Test
  void concurrentAndRepeatedObservationsOfAMachineCostOneBmcSession(Vertx vertx) throws Exception {
    // A repeat within a minute gets the last answer: a repeat on a loaded machine comes well within
    // it.
    try (ApiFixture fx =
            ApiFixture.start(vertx, Map.of("WARMMETAL_POWER_OBSERVE_MIN_INTERVAL_MS", "60000"));
        RedfishBmc bmc = RedfishBmc.start(vertx)) {
      String machine = fx.registerMachines(1, ApiFixture.facts(8, 32), false).get(0);
      fx.client.post("/v1/machines/" + machine + "/cordon", ApiFixture.ADMIN, null);
      String path = "/v1/machines/" + machine + "/power";
      assertThat(
              fx.client
                  .put(
                      path,
                      ApiFixture.ADMIN,
                      new JsonObject()
                          .put("driver", "redfish")
                          .put("address", "127.0.0.1")
                          .put("port", bmc.port)
                          .put("username", RedfishBmc.USER)
                          .put("password", RedfishBmc.PASSWORD)
                          .put("tlsPin", bmc.caPin.value()))
                  .status())
          .isEqualTo(200);
      bmc.delayStatus(500); // long enough for all the requests to arrive while the first look runs

      List<Future<Response>> calls = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        calls.add(fx.client.send(HttpMethod.GET, path + "?observe=true", ApiFixture.ADMIN, null));
      }
      List<Response> answers = Future.all(calls).await().list();
      assertThat(answers).allSatisfy(r -> assertThat(r.status()).isEqualTo(200));
      assertThat(answers).extracting(r -> r.body().getString("observed")).containsOnly("off");
      assertThat(answers)
          .extracting(r -> r.body().getString("observedAt"))
          .hasSize(10)
          .containsOnly(answers.get(0).body().getString("observedAt"));
      assertThat(answers).filteredOn(r -> !r.body().getBoolean("observationReused")).hasSize(1);
      assertThat(bmc.statusReads()).isEqualTo(1);

      // A repeat within the minimum interval gets the last answer.
      JsonObject repeat = fx.client.get(path + "?observe=true", ApiFixture.ADMIN).body();
      assertThat(repeat.getBoolean("observationReused")).isTrue();
      assertThat(repeat.getString("observedAt"))
          .isEqualTo(answers.get(0).body().getString("observedAt"));
      assertThat(bmc.statusReads()).isEqualTo(1);

      // A switch makes it stale: the next observation asks the BMC again.
      assertThat(
              fx.client
                  .post("/v1/machines/" + machine + "/power-on", ApiFixture.ADMIN, null)
                  .status())
          .isEqualTo(200);
      JsonObject after = fx.client.get(path + "?observe=true", ApiFixture.ADMIN).body();
      assertThat(after.getString("observed")).isEqualTo("on");
      assertThat(after.getBoolean("observationReused")).isFalse();
      assertThat(bmc.statusReads()).isEqualTo(2);
    }
  }

  /**
   * More observations of dead BMCs (each ~6 s of ipmitool retries) than the switching pool has
   * threads: the power-on of another machine still completes before any of them ends.
   */
  @Test
  @Tag("processes") // ipmi_sim and ipmitool
  void aPowerOnIsNotHeldUpByObservationsOfDeadBmcs(Vertx vertx) throws Exception {
    int dead = 18; // more than the 16 threads switching runs on
    try (ApiFixture fx = ApiFixture.start(vertx, Map.of("WARMMETAL_POWER_OBSERVE_WORKERS", "20"));
        IpmiSim bmc = IpmiSim.start();
        DatagramSocket silent = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
      List<String> machines = fx.registerMachines(dead + 1, ApiFixture.facts(8, 32), false);
      for (String m : machines) {
        fx.client.post("/v1/machines/" + m + "/cordon", ApiFixture.ADMIN, null);
        boolean live = m.equals(machines.get(0));
        assertThat(
                fx.client
                    .put(
                        "/v1/machines/" + m + "/power",
                        ApiFixture.ADMIN,
                        new JsonObject()
                            .put("driver", "ipmi")
                            .put("address", "127.0.0.1")
                            .put("port", live ? bmc.port : silent.getLocalPort())
                            .put("username", IpmiSim.USER)
                            .put("password", IpmiSim.PASSWORD))
                    .status())
            .isEqualTo(200);
      }

      AtomicLong firstObservationEnded = new AtomicLong(Long.MAX_VALUE);
      List<Future<Response>> observations = new ArrayList<>();
      for (String m : machines.subList(1, machines.size())) {
        observations.add(
            fx.client
                .send(
                    HttpMethod.GET,
                    "/v1/machines/" + m + "/power?observe=true",
                    ApiFixture.ADMIN,
                    null)
                .onComplete(
                    x -> firstObservationEnded.accumulateAndGet(System.nanoTime(), Math::min)));
      }
      awaitIpmitools(16); // the observations hold as many BMC sessions as switching has threads

      Response on =
          fx.client.post("/v1/machines/" + machines.get(0) + "/power-on", ApiFixture.ADMIN, null);
      long onEnded = System.nanoTime();
      assertThat(on.status()).as(on.raw()).isEqualTo(200);
      assertThat(bmc.poweredOn()).isTrue();

      List<Response> answers = Future.all(observations).await().list();
      assertThat(answers)
          .allSatisfy(r -> assertThat(r.body().getString("observeError")).isNotNull());
      assertThat(onEnded)
          .as("the power-on ended before the first observation of a dead BMC")
          .isLessThan(firstObservationEnded.get());
    }
  }

  private static void awaitIpmitools(int n) throws InterruptedException {
    Await.until(
        n + " ipmitool sessions",
        () ->
            ProcessHandle.current()
                    .descendants()
                    .filter(p -> p.info().command().map(c -> c.endsWith("ipmitool")).orElse(false))
                    .count()
                >= n);
  }
}
