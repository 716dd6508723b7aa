package io.warmmetal.fleet.kubelet;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.commands.Outcome;
import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.commands.JoinParams;
import io.warmmetal.protocol.commands.KubernetesJoin;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * A simulated kubelet (the KWOK idea): after a simulated join succeeds it registers a real {@code
 * Node} in the Kubernetes API as the shipped join script and a real kubelet would (the join's node
 * labels, the instance type and the machine's zone; hostname, arch and os, beta keys too; taints,
 * capacity, providerID, Ready), keeps it alive and runs its pods through {@link SimulatedNodes},
 * and after a reset removes it — so the controller can be tested without hardware. Wraps the
 * executor that simulates the commands; Kubernetes calls run on a worker.
 */
public final class SimulatedKubelet implements Executor {
  private final Vertx vertx;
  private final Executor simulation;
  private final SimulatedNodes cluster;
  private final KubernetesClient kube;
  private final String nodeName;
  private final JsonObject facts;

  public SimulatedKubelet(
      Vertx vertx, Executor simulation, SimulatedNodes cluster, String nodeName, JsonObject facts) {
    this.vertx = vertx;
    this.simulation = simulation;
    this.cluster = cluster;
    this.kube = cluster.kube();
    this.nodeName = nodeName;
    this.facts = facts;
  }

  @Override
  public Future<Outcome> run(Command command, BiConsumer<String, String> progress) {
    return simulation
        .run(command, progress)
        .compose(
            outcome -> {
              if (!outcome.succeeded()) {
                return Future.succeededFuture(outcome);
              }
              return switch (command.kind()) {
                case JOIN ->
                    vertx.executeBlocking(() -> register((JoinParams) command.params()), false);
                case RESET ->
                    vertx.executeBlocking(
                        () -> {
                          cluster.remove(nodeName);
                          kube.nodes().withName(nodeName).delete();
                          return outcome;
                        },
                        false);
                default -> Future.succeededFuture(outcome);
              };
            })
        .recover(
            err ->
                Future.succeededFuture(Outcome.failed("simulated kubelet: " + err.getMessage())));
  }

  private Outcome register(JoinParams params) {
    Map<String, String> labels = new HashMap<>();
    labels.put("kubernetes.io/hostname", nodeName);
    String arch = "aarch64".equals(facts.getString("arch")) ? "arm64" : "amd64";
    labels.put("kubernetes.io/os", "linux");
    labels.put("kubernetes.io/arch", arch);
    // The beta keys too, as a real kubelet registers them: without them kube-controller-manager
    // adds them to every new Node, two more of its rate-limited requests (20/s) for each, which
    // halves how fast it lifts the not-ready taint in a burst.
    labels.put("beta.kubernetes.io/os", "linux");
    labels.put("beta.kubernetes.io/arch", arch);
    labels.put("node.kubernetes.io/instance-type", params.shape());
    KubernetesJoin join = params.kubernetes();
    if (join != null) {
      labels.putAll(join.nodeLabels());
    }
    params
        .machineLabels()
        .forEach(
            (key, value) -> {
              if (key.equals("topology.kubernetes.io/zone")
                  || key.equals("topology.kubernetes.io/region")) {
                labels.putIfAbsent(key, value);
              }
            });
    List<Taint> taints = new ArrayList<>();
    for (var taint :
        join == null ? List.<io.warmmetal.protocol.commands.Taint>of() : join.taints()) {
      taints.add(
          new TaintBuilder()
              .withKey(taint.key())
              .withValue(taint.value())
              .withEffect(taint.effect())
              .build());
    }
    Map<String, Quantity> capacity = new HashMap<>();
    capacity.put("cpu", new Quantity(String.valueOf(facts.getInteger("cpus"))));
    capacity.put("memory", new Quantity(facts.getLong("memoryMiB") + "Mi"));
    capacity.put("pods", new Quantity("110"));
    int gpus = facts.getJsonArray("gpus", new JsonArray()).size();
    if (gpus > 0) {
      capacity.put("nvidia.com/gpu", new Quantity(String.valueOf(gpus)));
    }
    NodeCondition ready =
        new NodeConditionBuilder()
            .withType("Ready")
            .withStatus("True")
            .withReason("KubeletReady")
            .withMessage("simulated kubelet is posting ready status")
            .withLastHeartbeatTime(Instant.now().toString())
            .withLastTransitionTime(Instant.now().toString())
            .build();
    var node =
        new NodeBuilder()
            .withNewMetadata()
            .withName(nodeName)
            .withLabels(labels)
            .endMetadata()
            .withNewSpec()
            .withProviderID(params.providerId())
            .withTaints(taints)
            .endSpec()
            .withNewStatus()
            .withCapacity(capacity)
            .withAllocatable(capacity)
            .withConditions(ready)
            .endStatus()
            .build();
    kube.nodes().resource(node).createOr(NonDeletingOperation::update);
    // A real API server ignores status on create; kube-controller-manager writes the new Node too
    // (pod CIDR,
    // taints), so the status goes as a merge patch, not an update guarded by a resourceVersion.
    kube.nodes()
        .withName(nodeName)
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            Serialization.asJson(new NodeBuilder().withStatus(node.getStatus()).build()));
    cluster.add(nodeName);
    return Outcome.ok("joined; Node " + nodeName + " registered");
  }
}
