package io.warmmetal.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonObject;
import io.warmmetal.agent.commands.Distribution;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.fleet.SimulatedAgent;
import io.warmmetal.fleet.kubelet.SimulatedKubelet;
import io.warmmetal.fleet.kubelet.SimulatedNodes;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

/**
 * Simulated servers enrolled with a real API: the real agent's enrollment and channel, commands
 * simulated in milliseconds, and — for machines with a kubelet — simulated kubelets whose joins
 * register Nodes in the real cluster (kept alive, their pods run).
 */
public final class SimulatedMachines implements AutoCloseable {
  public final SimulatedNodes kubelets;
  private final ApiFixture fx;
  private final List<SimulatedAgent> agents = new ArrayList<>();
  private final Enrollment enrollment;
  private final WebSocketClient ws;
  private final URI agentPort;

  /** Machines of the API {@code fx}, whose agents' port listens on {@code agentHost}. */
  public SimulatedMachines(Vertx vertx, KubernetesClient kube, ApiFixture fx, String agentHost) {
    this.fx = fx;
    this.kubelets = new SimulatedNodes(kube);
    this.agentPort = URI.create("https://" + agentHost + ":" + fx.api.agentPort());
    this.enrollment = new Enrollment(vertx, agentPort, fx.api.caPin());
    this.ws = vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
  }

  /**
   * Enrolls {@code n} simulated agents of {@code facts}, named {@code prefix} and a number, their
   * enrollment token's {@code labels} on them; with {@code kubelet}, their joins register Nodes.
   */
  public void add(
      Vertx vertx, int n, JsonObject facts, String prefix, boolean kubelet, JsonObject labels)
      throws Exception {
    String token =
        fx.client
            .post(
                "/v1/enrollment-tokens",
                ApiFixture.ADMIN,
                new JsonObject().put("uses", n).put("labels", labels))
            .body()
            .getString("token");
    for (int i = 0; i < n; i++) {
      String name = prefix + agents.size();
      JsonObject machine =
          new JsonObject()
              .put("name", name)
              .put("facts", facts)
              .put("identity", new JsonObject().put("systemUuid", UUID.randomUUID().toString()));
      Executor executor =
          new SimulatedExecutor(
              vertx,
              Map.of(
                  "prepare",
                  Distribution.parse("fixed:20ms"),
                  "join",
                  Distribution.parse("fixed:50ms"),
                  "reset",
                  Distribution.parse("fixed:20ms")),
              0.0,
              new Random(i));
      if (kubelet) {
        executor = new SimulatedKubelet(vertx, executor, kubelets, name, facts);
      }
      agents.add(
          SimulatedAgent.start(
                  vertx,
                  enrollment,
                  ws,
                  agentPort,
                  token,
                  machine,
                  Files.createTempDirectory("sim"),
                  executor)
              .await());
    }
  }

  /** Stops the agents, leaving their Nodes to whoever closes the kubelets. */
  public void stopAgents() {
    agents.forEach(a -> a.stop().await());
  }

  @Override
  public void close() {
    stopAgents();
    kubelets.close();
    ws.close().await();
    enrollment.close().await();
  }
}
