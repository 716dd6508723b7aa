package io.warmmetal.e2e.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.RealCluster;
import io.warmmetal.protocol.testing.Await;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Karpenter's CRDs on a real API server: their schema turns bad NodePools away at the door; what
 * only their CEL rules catch (ignored by this 1.20 API server) the controller catches, marks {@code
 * ValidationSucceeded=False} and leaves out, while the good NodePool provisions. Status as upstream
 * writes it: NodePool conditions, nodes and resources; node-class readiness; NodeClaim Ready; the
 * printer columns kubectl shows.
 */
@ExtendWith({VertxExtension.class, RealCluster.class})
@Tag("cluster")
class StatusAndValidationTest {
  private KubernetesClient kube;
  private Fleet cluster;

  @BeforeEach
  void start(Vertx vertx, ControlPlane controlPlane) throws Exception {
    cluster = Fleet.start(vertx, controlPlane, 2, pool -> {});
    kube = cluster.kube;
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  private NodePool pool(String name, Consumer<NodePool> change) {
    NodePool pool = Serialization.clone(kube.resources(NodePool.class).withName("default").get());
    pool.getMetadata().setName(name);
    pool.getMetadata().setResourceVersion(null);
    pool.getMetadata().setUid(null);
    pool.setStatus(null);
    change.accept(pool);
    return pool;
  }

  private Condition condition(String pool, String type) {
    NodePool current = kube.resources(NodePool.class).withName(pool).get();
    return current == null || current.getStatus() == null
        ? null
        : Conditions.get(current.getStatus().conditions, type);
  }

  private boolean is(String pool, String type, String status) {
    Condition c = condition(pool, type);
    return c != null && status.equals(c.getStatus());
  }

  @Test
  void theApiServerRefusesWhatUpstreamsSchemaRefuses() {
    for (var bad :
        List.<Consumer<NodePool>>of(
            p -> p.getSpec().weight = 500,
            p -> p.getSpec().template.spec.expireAfter = "30d",
            p ->
                p.getSpec().template.spec.requirements =
                    List.of(new Requirement("kubernetes.io/arch", "Foo", List.of())),
            p -> p.getSpec().template.spec.nodeClassRef.group = null)) {
      NodePool pool = pool("refused", bad);
      assertThatThrownBy(() -> kube.resources(NodePool.class).resource(pool).create())
          .isInstanceOf(KubernetesClientException.class)
          .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422));
    }
  }

  @Test
  void aNodePoolOnlyCelWouldRefuseIsMarkedInvalidAndTheOthersCarryOn() throws Exception {
    // Valid to this API server's schema; invalid to upstream's CEL rules (and RuntimeValidate).
    kube.resources(NodePool.class)
        .resource(
            pool(
                "invalid",
                p -> {
                  p.getSpec().weight = 100; // tried first, were it valid
                  p.getSpec().template.spec.requirements =
                      List.of(
                          new Requirement("karpenter.sh/nodepool", "In", List.of("default")),
                          new Requirement("node.kubernetes.io/instance-type", "In", List.of()));
                }))
        .create();
    kube.resources(NodePool.class)
        .resource(pool("orphan", p -> p.getSpec().template.spec.nodeClassRef.name = "missing"))
        .create();
    cluster.trigger();
    Await.until(
        "the invalid NodePool marked",
        () -> is("invalid", Conditions.VALIDATION_SUCCEEDED, "False"));
    Condition validation = condition("invalid", Conditions.VALIDATION_SUCCEEDED);
    assertThat(validation.getReason()).isEqualTo("NodePoolValidationFailed");
    assertThat(validation.getMessage())
        .contains("label \"karpenter.sh/nodepool\" is restricted")
        .contains("requirements with operator 'In' must have a value defined");
    Await.until("its Ready False", () -> is("invalid", Conditions.READY, "False"));
    Await.until(
        "the orphan's node class not found",
        () -> is("orphan", Conditions.NODE_CLASS_READY, "False"));
    assertThat(condition("orphan", Conditions.NODE_CLASS_READY).getReason())
        .isEqualTo("NodeClassNotFound");
    assertThat(condition("orphan", Conditions.VALIDATION_SUCCEEDED).getStatus()).isEqualTo("True");

    // The good NodePool provisions; no NodeClaim comes from the invalid one.
    kube.pods().inNamespace("default").resource(Fleet.pod("web-1", "2")).create();
    String node = cluster.awaitScheduled("web-1");
    List<NodeClaim> claims = kube.resources(NodeClaim.class).list().getItems();
    assertThat(claims)
        .extracting(c -> c.getMetadata().getLabels().get("karpenter.sh/nodepool"))
        .containsOnly("default");

    Await.until(
        "the default NodePool Ready, with its node counted",
        () -> {
          NodePool p = kube.resources(NodePool.class).withName("default").get();
          return is("default", Conditions.READY, "True")
              && p.getStatus().nodes != null
              && p.getStatus().nodes == 1
              && is("default", Conditions.NODE_REGISTRATION_HEALTHY, "True");
        });
    NodePool ready = kube.resources(NodePool.class).withName("default").get();
    assertThat(ready.getStatus().resources).containsKeys("cpu", "memory", "pods", "nodes");
    assertThat(ready.getStatus().resources.get("cpu").getNumericalAmount().intValue())
        .isEqualTo(16);
    assertThat(Conditions.isTrue(ready.getStatus().conditions, Conditions.NODE_CLASS_READY))
        .isTrue();
    WarmMetalNodeClass nodeClass =
        kube.resources(WarmMetalNodeClass.class).withName("default").get();
    assertThat(Conditions.isTrue(nodeClass.getStatus().conditions, Conditions.READY)).isTrue();

    Await.until(
        "the NodeClaim Ready",
        () ->
            kube.resources(NodeClaim.class).list().getItems().stream()
                .allMatch(
                    c ->
                        c.getStatus() != null
                            && Conditions.isTrue(c.getStatus().conditions, Conditions.READY)));
    // Events with upstream's reasons, and upstream's metrics.
    Await.until(
        "the pod's Nominated event",
        () ->
            kube.v1().events().inNamespace("default").list().getItems().stream()
                .anyMatch(
                    e ->
                        "Nominated".equals(e.getReason())
                            && "web-1".equals(e.getInvolvedObject().getName())
                            && e.getMessage()
                                .equals(
                                    "Pod should schedule on: nodeclaim/"
                                        + claims.get(0).getMetadata().getName())
                            && "karpenter".equals(e.getSource().getComponent())));
    String scrape = cluster.metrics.scrape();
    assertThat(scrape)
        .contains(
            "karpenter_nodeclaims_created_total{min_values_relaxed=\"false\",nodepool=\"default\","
                + "reason=\"provisioned\",} 1.0");
    assertThat(scrape)
        .contains("karpenter_nodes_created_total{nodepool=\"default\",zone=\"rack-1\",} 1.0");
    assertThat(scrape)
        .contains("karpenter_nodepools_usage{nodepool=\"default\",resource_type=\"cpu\",} 16.0");
    assertThat(scrape)
        .contains(
            "karpenter_scheduler_scheduling_duration_seconds_count{controller=\"provisioner\",}");

    // kubectl get nodeclaims: upstream's printer columns, filled.
    Map<String, String> row = table("nodeclaims").get(0);
    assertThat(row)
        .containsEntry("Type", "x86-16c-64g")
        .containsEntry("Capacity", "on-demand")
        .containsEntry("Zone", "rack-1")
        .containsEntry("Node", node)
        .containsEntry("Ready", "True")
        .containsEntry("NodePool", "default");
    assertThat(table("nodepools"))
        .anySatisfy(
            r ->
                assertThat(r)
                    .containsEntry("Name", "default")
                    .containsEntry("NodeClass", "default")
                    .containsEntry("Nodes", "1")
                    .containsEntry("Ready", "True"));
  }

  /**
   * What {@code kubectl get <plural>} prints: the API server's Table rendering of the CRD's printer
   * columns.
   */
  @SuppressWarnings("unchecked")
  private List<Map<String, String>> table(String plural) throws Exception {
    var http = kube.getHttpClient();
    var request =
        http.newHttpRequestBuilder()
            .uri(kube.getMasterUrl() + "apis/karpenter.sh/v1/" + plural)
            .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
            .build();
    String body = http.sendAsync(request, String.class).get().body();
    Map<String, Object> table = Serialization.unmarshal(body, Map.class);
    List<Map<String, Object>> columns = (List<Map<String, Object>>) table.get("columnDefinitions");
    List<Map<String, Object>> rows = (List<Map<String, Object>>) table.get("rows");
    return rows.stream()
        .map(
            r -> {
              List<Object> cells = (List<Object>) r.get("cells");
              Map<String, String> named = new HashMap<>();
              for (int i = 0; i < columns.size(); i++) {
                named.put((String) columns.get(i).get("name"), String.valueOf(cells.get(i)));
              }
              return named;
            })
        .toList();
  }
}
