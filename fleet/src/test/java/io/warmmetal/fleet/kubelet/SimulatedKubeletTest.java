package io.warmmetal.fleet.kubelet;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.commands.Outcome;
import io.warmmetal.agent.commands.SimulatedExecutor;
import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.commands.CommandKind;
import io.warmmetal.protocol.commands.CommandParams;
import io.warmmetal.protocol.commands.JoinParams;
import io.warmmetal.protocol.commands.KubernetesJoin;
import io.warmmetal.protocol.commands.Taint;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The simulated kubelet against fabric8's mock API server (CRUD mode): a Node appears on join, goes
 * on reset.
 */
@EnableKubernetesMockClient(crud = true)
class SimulatedKubeletTest {
  KubernetesClient kube;
  private Vertx vertx;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void tearDown() {
    vertx.close().await();
  }

  @Test
  void aJoinRegistersAReadyNodeAndAResetRemovesIt() {
    JsonObject facts =
        new JsonObject()
            .put("cpus", 64)
            .put("memoryMiB", 524288)
            .put("arch", "x86_64")
            .put(
                "gpus",
                new JsonArray()
                    .add(new JsonObject().put("model", "H100"))
                    .add(new JsonObject().put("model", "H100")));
    SimulatedNodes nodes = new SimulatedNodes(kube);
    Executor kubelet =
        new SimulatedKubelet(
            vertx,
            new SimulatedExecutor(vertx, Map.of(), 0.0, new Random()),
            nodes,
            "sim-7",
            facts);
    JoinParams params =
        new JoinParams(
            "warmmetal://m-0123456789abcdef",
            "x86-64c-512g-2xh100",
            Map.of(),
            new KubernetesJoin(
                "10.0.0.1:6443",
                "sha256:ab",
                "abcdef.x",
                Map.of("karpenter.sh/nodepool", "gpu"),
                List.of(new Taint("karpenter.sh/unregistered", null, "NoExecute"))),
            null);

    Outcome joined =
        kubelet.run(new Command("cmd-1", 1, CommandKind.JOIN, "i-1", params), (s, m) -> {}).await();
    assertThat(joined.succeeded()).as(joined.message()).isTrue();
    Node node = kube.nodes().withName("sim-7").get();
    assertThat(
            kube.leases()
                .inNamespace("kube-node-lease")
                .withName("sim-7")
                .get()
                .getSpec()
                .getHolderIdentity())
        .isEqualTo("sim-7"); // its heartbeat
    assertThat(node.getSpec().getProviderID()).isEqualTo("warmmetal://m-0123456789abcdef");
    assertThat(node.getMetadata().getLabels())
        .containsEntry("karpenter.sh/nodepool", "gpu")
        .containsEntry("node.kubernetes.io/instance-type", "x86-64c-512g-2xh100")
        .containsEntry("kubernetes.io/arch", "amd64")
        .containsEntry("beta.kubernetes.io/arch", "amd64")
        .containsEntry("beta.kubernetes.io/os", "linux");
    assertThat(node.getSpec().getTaints())
        .extracting("key")
        .containsExactly("karpenter.sh/unregistered");
    assertThat(node.getStatus().getCapacity().get("nvidia.com/gpu").getAmount()).isEqualTo("2");
    assertThat(node.getStatus().getCapacity().get("cpu").getAmount()).isEqualTo("64");
    assertThat(node.getStatus().getConditions())
        .anySatisfy(
            c -> {
              assertThat(c.getType()).isEqualTo("Ready");
              assertThat(c.getStatus()).isEqualTo("True");
            });

    Outcome reset =
        kubelet
            .run(
                new Command(
                    "cmd-2", 2, CommandKind.RESET, "i-1", CommandParams.none(CommandKind.RESET)),
                (s, m) -> {})
            .await();
    assertThat(reset.succeeded()).isTrue();
    assertThat(kube.nodes().withName("sim-7").get()).isNull();
    assertThat(kube.leases().inNamespace("kube-node-lease").withName("sim-7").get()).isNull();
    nodes.close();
  }
}
