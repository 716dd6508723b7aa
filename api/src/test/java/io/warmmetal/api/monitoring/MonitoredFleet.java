package io.warmmetal.api.monitoring;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What the monitoring tests watch: a running API with machines of one shape, a pool and launches,
 * and the controller's registry with every meter touched once.
 */
final class MonitoredFleet {
  static final String SHAPE = "x86-8c-32g";

  private MonitoredFleet() {}

  /** A running API with {@code machines} warm machines of {@link #SHAPE}. */
  static ApiFixture start(Vertx vertx, int machines) throws Exception {
    ApiFixture fx = ApiFixture.start(vertx);
    fx.registerMachines(machines, ApiFixture.facts(8, 32), true);
    return fx;
  }

  /** Sets the pool of {@link #SHAPE} to keep {@code warm} machines warm, and runs a pool pass. */
  static void pool(ApiFixture fx, int warm) {
    assertThat(
            fx.client
                .put(
                    "/v1/pools/" + SHAPE,
                    ApiFixture.ADMIN,
                    new JsonObject().put("minWarm", warm).put("maxWarm", warm))
                .status())
        .isEqualTo(200);
    fx.reconcilePools();
  }

  /** Launches one instance of {@link #SHAPE}, expecting {@code status}. */
  static void launch(ApiFixture fx, int status) {
    assertThat(
            fx.client
                .post("/v1/instances", ApiFixture.ADMIN, new JsonObject().put("shape", SHAPE))
                .status())
        .isEqualTo(status);
  }

  /** The controller's registry with every meter it has touched once. */
  static KarpenterMetrics controllerMetrics() {
    KarpenterMetrics metrics = new KarpenterMetrics();
    metrics.nodeClaimCreated("default", "provisioned");
    metrics.nodeClaimTerminated("default", "on-demand", "rack-1");
    metrics.nodeClaimDisrupted("empty", "default", "WhenEmpty", "graceful");
    metrics.nodeClaimUnhealthyDisrupted("ready", "default", "on-demand", "");
    metrics.nodeCreated("default", "rack-1");
    metrics.nodeTerminated("default", "rack-1");
    metrics.disruptionDecision(List.of("default"), "delete", "empty", "single");
    metrics.scheduled(Duration.ofMillis(3));
    metrics.pending(1, 1);
    metrics.clusterNodes(1);
    metrics.nodePools(
        Map.of("default", Map.of("cpu", 8.0)), Map.of("default", Map.of("cpu", 64.0)));
    metrics.eligibleNodes(Map.of("empty", 1));
    metrics.podStarted(Duration.ofSeconds(3));
    metrics.podBound(Duration.ofSeconds(1));
    metrics.nodeTerminationDuration("default", Duration.ofSeconds(30));
    metrics.nodeClaimTerminationDuration("default", Duration.ofSeconds(30));
    metrics.instanceTerminationDuration("default", Duration.ofSeconds(1));
    metrics.nodeLifetime("default", Duration.ofHours(1));
    metrics.nodeDrained("default");
    metrics.podDrained("empty");
    metrics.evictionRequested(200);
    metrics.cloudProviderCall("Create", Duration.ofMillis(40), "InsufficientCapacityError");
    metrics.reconciled("provisioning", Duration.ofMillis(3), "error");
    metrics.workQueue("nodeclaim.lifecycle", () -> 0);
    metrics.allowedDisruptions(Map.of("default", Map.of("Empty", 1)));
    metrics.decisionEvaluated("empty", "empty", Duration.ofMillis(1));
    metrics.consolidationMove("rejected", "default", "Balanced");
    metrics.consolidationScore("rejected", "default", "Balanced", 0.2);
    metrics.nodesConsumingBudgets(Map.of("default", 1), List.of("Empty"));
    metrics.nodePoolCosts(Map.of("default", 1.5));
    metrics.pendingByEffectiveZone(Map.of("rack-1", 1));
    Pod undecided = pod();
    undecided.getMetadata().setName("undecided");
    Pod placed = pod();
    placed.getMetadata().setName("placed");
    metrics.podsPending(List.of(undecided, placed));
    metrics.podsDecided(List.of(placed), List.of());
    Pod pending = pod();
    pending.getMetadata().setName("pending");
    pending.getSpec().setNodeName(null);
    metrics.observeCluster(List.of(node()), List.of(pod(), pending));
    return metrics;
  }

  private static Node node() {
    return new NodeBuilder()
        .withNewMetadata()
        .withName("wm-1")
        .withCreationTimestamp("2026-12-02T12:00:00Z")
        .withLabels(Map.of("karpenter.sh/nodepool", "default"))
        .endMetadata()
        .withNewStatus()
        .withCapacity(Map.of("cpu", new Quantity("16")))
        .withAllocatable(Map.of("cpu", new Quantity("15")))
        .endStatus()
        .build();
  }

  private static Pod pod() {
    return new PodBuilder()
        .withNewMetadata()
        .withName("web")
        .withNamespace("default")
        .withCreationTimestamp("2026-12-02T12:00:00Z")
        .endMetadata()
        .withNewSpec()
        .withNodeName("wm-1")
        .addNewContainer()
        .withName("app")
        .withNewResources()
        .addToRequests("cpu", new Quantity("1"))
        .addToLimits("cpu", new Quantity("2"))
        .endResources()
        .endContainer()
        .endSpec()
        .withNewStatus()
        .withPhase("Pending")
        .endStatus()
        .build();
  }
}
