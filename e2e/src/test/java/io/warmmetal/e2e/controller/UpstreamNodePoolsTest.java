package io.warmmetal.e2e.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.RealCluster;
import java.io.InputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * NodePools written for Karpenter provision here as they are: upstream's published examples, only
 * their {@code nodeClassRef} changed. Their requirements on AWS's keys ({@code
 * karpenter.k8s.aws/instance-category}, {@code instance-generation}), which WarmMetal's shapes do
 * not define, do not rule the shapes out — as upstream compares only the keys both sides define.
 */
@ExtendWith({VertxExtension.class, RealCluster.class})
@Tag("cluster")
class UpstreamNodePoolsTest {
  private Fleet cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"general-purpose.yaml", "100-cpu-limit.yaml"})
  void anUpstreamExampleNodePoolProvisionsAsPublished(
      String example, Vertx vertx, ControlPlane controlPlane) throws Exception {
    cluster = Fleet.start(vertx, controlPlane, 1, pool -> {});
    cluster.kube.resources(NodePool.class).withName("default").delete();
    NodePool upstream;
    try (InputStream in = getClass().getResourceAsStream("/upstream/" + example)) {
      upstream = cluster.kube.resources(NodePool.class).load(in).item();
    }
    cluster.kube.resources(NodePool.class).resource(upstream).create();

    cluster.create(Fleet.pod("inflate", "1"));
    String node = cluster.awaitScheduled("inflate");
    Node n = cluster.kube.nodes().withName(node).get();
    assertThat(n.getMetadata().getLabels())
        .containsEntry("karpenter.sh/nodepool", upstream.getMetadata().getName())
        .containsEntry("karpenter.sh/capacity-type", "on-demand")
        .containsEntry("kubernetes.io/arch", "amd64");
  }
}
