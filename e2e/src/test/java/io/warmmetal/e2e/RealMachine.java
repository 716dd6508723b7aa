package io.warmmetal.e2e;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.enrollment.AgentProcessTest;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.Daemon;
import io.warmmetal.e2e.cluster.KubeBinaries;
import io.warmmetal.e2e.cluster.NodeHost;
import io.warmmetal.protocol.testing.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A real machine in the fleet: a {@link NodeHost} (containerd, kubelet and kubeadm present) running
 * the real agent process — its shipped prepare, join and reset scripts — enrolled with the API and
 * kept warm by its pool.
 */
public final class RealMachine implements AutoCloseable {
  public final NodeHost host;
  public final Daemon agent;
  public final String machineId;
  public final String shape;

  /** Its host's name: its Node's. */
  public final String name;

  private RealMachine(NodeHost host, Daemon agent, String machineId, String shape, String name) {
    this.name = name;
    this.host = host;
    this.agent = agent;
    this.machineId = machineId;
    this.shape = shape;
  }

  /**
   * The agent's environment on the host: its node name, the images it imports, the kubelet's cgroup
   * (the host's kubelet puts its pods under the sandbox's cgroup: this machine's are shared; the
   * cluster's configuration leaves the cgroup root alone, as real clusters do), and what the build
   * says about the kubelet.
   */
  private static Map<String, String> agentEnvironment(
      String name, NodeHost host, ControlPlane cluster) {
    Map<String, String> env = new HashMap<>(KubeBinaries.kubeletEnvironment());
    env.put("WARMMETAL_NODE_NAME", name);
    env.put("WARMMETAL_IMAGE_ARCHIVES", host.images().toString());
    env.put("WARMMETAL_KUBELET_ARGS", "--cgroup-root=" + cluster.sandbox().cgroupRoot());
    return env;
  }

  /**
   * The API settings that let agents in the cluster's network namespace reach the agents' port: it
   * listens on this host's end of the link, and its certificate names that address.
   */
  public static Map<String, String> apiSettings(ControlPlane cluster) {
    String address = cluster.network().hostAddress();
    return Map.of(
        "WARMMETAL_AGENT_HOST",
        address,
        "WARMMETAL_AGENT_NAMES",
        "localhost,127.0.0.1," + address,
        "WARMMETAL_HEARTBEAT_SECONDS",
        "2");
  }

  /**
   * Sets up the host, starts the agent, enrolls it and waits until its pool has prepared it: warm.
   */
  public static RealMachine start(ApiFixture fx, ControlPlane cluster, String name)
      throws Exception {
    NodeHost host = NodeHost.create(cluster, name);
    Daemon agent = null;
    try {
      String token =
          fx.client
              .post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject().put("uses", 1))
              .body()
              .getString("token");
      Path tokenFile = Files.createTempFile("warmmetal-e2e-token", "");
      Files.writeString(tokenFile, token);
      agent =
          host.start(
              "agent",
              List.of(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-Xmx128m",
                  "-jar",
                  AgentProcessTest.AGENT_JAR.toString(),
                  "--api",
                  "https://" + cluster.network().hostAddress() + ":" + fx.api.agentPort(),
                  "--ca-pin",
                  fx.api.caPin().value(),
                  "--token-file",
                  tokenFile.toString(),
                  "--state-dir",
                  "/var/lib/warmmetal-agent",
                  "--name",
                  name,
                  "--address",
                  host.address()),
              agentEnvironment(name, host, cluster));
      Daemon started = agent;
      String[] machine = new String[2];
      Await.until(
          "machine " + name + " enrolled",
          () -> {
            started.checkAlive();
            var rows =
                fx.db()
                    .preparedQuery("SELECT id, shape FROM machines WHERE name = $1")
                    .execute(Tuple.of(name))
                    .await();
            if (rows.size() == 0) {
              return false;
            }
            machine[0] = rows.iterator().next().getString("id");
            machine[1] = rows.iterator().next().getString("shape");
            return true;
          },
          60_000);
      Files.deleteIfExists(tokenFile);
      fx.client.put(
          "/v1/pools/" + machine[1],
          ApiFixture.ADMIN,
          new JsonObject().put("minWarm", 1).put("maxWarm", 1));
      RealMachine m = new RealMachine(host, agent, machine[0], machine[1], name);
      Await.until(
          "machine " + name + " prepared and warm",
          () -> {
            started.checkAlive();
            String state = m.state(fx);
            if ("failed".equals(state)) {
              throw new AssertionError(
                  "prepare failed: "
                      + fx.client.get("/v1/events?machineId=" + m.machineId, ApiFixture.ADMIN).raw()
                      + "\nagent:\n"
                      + started.tail(30));
            }
            return "warm".equals(state);
          },
          60_000);
      return m;
    } catch (Throwable t) {
      if (agent != null) {
        agent.close();
      }
      host.close();
      throw t;
    }
  }

  public String state(ApiFixture fx) {
    return fx.client.get("/v1/machines/" + machineId, ApiFixture.ADMIN).body().getString("state");
  }

  /**
   * What happened to it, for a failure's message: its events and the agent's and kubelet's last
   * lines.
   */
  public String story(ApiFixture fx) {
    return "events: "
        + fx.client.get("/v1/events?machineId=" + machineId, ApiFixture.ADMIN).raw()
        + "\nagent:\n"
        + agent.tail(30)
        + "\nkubelet:\n"
        + host.kubeletLogTail();
  }

  @Override
  public void close() {
    agent.close();
    host.close();
  }
}
