package io.warmmetal.e2e;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.e2e.cluster.Rack;
import io.warmmetal.e2e.cluster.VirtualServer;
import io.warmmetal.protocol.testing.Await;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Virtual servers of a {@link Rack} as the API sees them: which machine each enrolled as (by its
 * hardware identity), waits for their states that fail at once — with the machine's events and the
 * server's console — when one is quarantined or its server is off.
 */
final class RackServers {
  /** What a server under software emulation may take to boot and enroll. */
  static final long BOOT_MILLIS = 600_000;

  private final ApiFixture fx;
  private final Rack rack;
  private final List<VirtualServer> servers;

  RackServers(ApiFixture fx, Rack rack, List<VirtualServer> servers) {
    this.fx = fx;
    this.rack = rack;
    this.servers = servers;
  }

  /** Waits until every server has enrolled; answers each one's machine id. */
  Map<VirtualServer, String> awaitEnrolled() throws InterruptedException {
    Map<VirtualServer, String> machines = new LinkedHashMap<>();
    Await.until(
        "every server enrolled",
        () -> {
          for (VirtualServer s : servers) {
            s.checkRunning();
            var rows =
                fx.db()
                    .preparedQuery("SELECT id FROM machines WHERE system_uuid = $1")
                    .execute(Tuple.of(s.uuid()))
                    .await();
            if (rows.size() == 1) {
              machines.put(s, rows.iterator().next().getString("id"));
            }
          }
          return machines.size() == servers.size();
        },
        BOOT_MILLIS,
        () -> story(null));
    return machines;
  }

  String shapeOf(String machineId) {
    return machine(machineId).getString("shape");
  }

  /** The node image the machine reports it booted (null if none). */
  String image(String machineId) {
    JsonObject image = machine(machineId).getJsonObject("facts").getJsonObject("image");
    return image == null ? null : image.getString("version");
  }

  JsonObject machine(String machineId) {
    return fx.client.get("/v1/machines/" + machineId, ApiFixture.ADMIN).body();
  }

  /** Waits until every one of {@code machineIds} is in {@code state}. */
  void awaitAll(String state, Collection<String> machineIds) throws InterruptedException {
    Await.until(
        "machines " + machineIds + " " + state,
        () -> {
          servers.forEach(VirtualServer::checkRunning);
          boolean all = true;
          for (String id : machineIds) {
            String now = machine(id).getString("state");
            if ("failed".equals(now) && !"failed".equals(state)) {
              throw new AssertionError("machine " + id + " failed: " + story(id));
            }
            all &= now.equals(state);
          }
          return all;
        },
        BOOT_MILLIS,
        () -> story(null));
  }

  /** Waits until {@code count} pods labelled {@code app=<app>} are Running; answers them. */
  List<Pod> awaitRunningPods(KubernetesClient kube, String app, int count)
      throws InterruptedException {
    List<Pod> running = new ArrayList<>();
    Await.until(
        count + " " + app + " pods Running",
        () -> {
          servers.forEach(VirtualServer::checkRunning);
          running.clear();
          kube.pods().inNamespace("default").withLabel("app", app).list().getItems().stream()
              .filter(
                  p ->
                      p.getStatus() != null
                          && "Running".equals(p.getStatus().getPhase())
                          && p.getMetadata().getDeletionTimestamp() == null)
              .forEach(running::add);
          return running.size() == count;
        },
        BOOT_MILLIS,
        () -> story(null));
    return List.copyOf(running);
  }

  /**
   * How many times the server has booted the image (its initramfs says so on the console each
   * time).
   */
  int boots(VirtualServer server) {
    return (int)
        server.console().lines().filter(l -> l.contains("warmmetal: initramfs up")).count();
  }

  /**
   * For a failure's message: a machine's events (or every machine's), and each server's console
   * tail.
   */
  String story(String machineId) {
    StringBuilder b = new StringBuilder();
    b.append("events: ")
        .append(
            fx.client
                .get(
                    "/v1/events?limit=200" + (machineId == null ? "" : "&machineId=" + machineId),
                    ApiFixture.ADMIN)
                .raw());
    for (VirtualServer s : servers) {
      b.append("\n--- ").append(s.name()).append(" console:\n").append(s.console(60));
    }
    b.append("\n--- dhcp:\n").append(rack.dhcpLog(20));
    return b.toString();
  }
}
