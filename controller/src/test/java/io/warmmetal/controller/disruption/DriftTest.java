package io.warmmetal.controller.disruption;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.warmmetal.controller.karpenter.Hashes;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeClassReference;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Drift as upstream judges it: the NodePool's template hash, its requirements, and the node class's
 * hash.
 */
class DriftTest {
  private final NodePool pool = new NodePool();
  private final WarmMetalNodeClass nodeClass = new WarmMetalNodeClass();

  DriftTest() {
    pool.getMetadata().setName("default");
    pool.getSpec().template.spec.nodeClassRef = new NodeClassReference();
    pool.getSpec().template.spec.nodeClassRef.name = "default";
    pool.getSpec().template.metadata.labels = new HashMap<>(Map.of("team", "ml"));
    pool.getSpec().template.spec.requirements =
        List.of(new Requirement("kubernetes.io/arch", "In", List.of("amd64")));
    nodeClass.getSpec().join.apiServer = "10.0.0.1:6443";
  }

  /** A claim made from the pool and node class as they are now. */
  private NodeClaim claim() {
    NodeClaim claim = new NodeClaim();
    claim
        .getMetadata()
        .setLabels(new HashMap<>(Map.of("kubernetes.io/arch", "amd64", "team", "ml")));
    claim
        .getMetadata()
        .setAnnotations(
            new HashMap<>(
                Map.of(
                    Hashes.NODEPOOL_HASH_ANNOTATION,
                    Hashes.nodePool(pool),
                    Hashes.NODEPOOL_HASH_VERSION_ANNOTATION,
                    Hashes.NODEPOOL_HASH_VERSION,
                    Hashes.NODECLASS_HASH_ANNOTATION,
                    nodeClass.hash())));
    return claim;
  }

  @Test
  void aClaimAsItsPoolAndNodeClassAreHasNotDrifted() {
    assertThat(Drift.reason(claim(), pool, nodeClass)).isNull();
  }

  @Test
  void aChangedTemplateIsNodePoolDrift() {
    NodeClaim claim = claim();
    pool.getSpec().template.spec.taints =
        List.of(new TaintBuilder().withKey("gpu").withEffect("NoSchedule").build());
    assertThat(Drift.reason(claim, pool, nodeClass)).isEqualTo("NodePoolDrifted");
  }

  @Test
  void whatTheHashLeavesOutIsNoDrift() {
    NodeClaim claim = claim();
    // Requirements drift on their own terms; order in lists is no change; budgets and limits are
    // not the template.
    pool.getSpec().template.spec.requirements =
        List.of(new Requirement("kubernetes.io/arch", "In", List.of("amd64", "arm64")));
    pool.getSpec().limits = Map.of("cpu", new Quantity("10"));
    assertThat(Drift.reason(claim, pool, nodeClass)).isNull();
    // An older hash version is not compared (upstream re-stamps claims instead of drifting them
    // all).
    claim.getMetadata().getAnnotations().put(Hashes.NODEPOOL_HASH_VERSION_ANNOTATION, "v2");
    pool.getSpec().template.metadata.labels.put("team", "search");
    assertThat(Drift.reason(claim, pool, nodeClass)).isNull();
  }

  @Test
  void labelsTheRequirementsNoLongerAllowAreRequirementsDrift() {
    NodeClaim claim = claim();
    pool.getSpec().template.spec.requirements =
        List.of(
            new Requirement("kubernetes.io/arch", "In", List.of("arm64")),
            new Requirement(
                "example.com/rack",
                "In",
                List.of("r1"))); // a key the claim lacks is not held against it
    assertThat(Drift.reason(claim, pool, nodeClass)).isEqualTo("RequirementsDrifted");
  }

  @Test
  void aNodeClassThatJoinsOrBuildsNodesDifferentlyIsNodeClassDrift() {
    NodeClaim claim = claim();
    nodeClass.getSpec().endpoint = "http://elsewhere:8080"; // where the API is changes no node
    assertThat(Drift.reason(claim, pool, nodeClass)).isNull();
    nodeClass.getSpec().prePullImages.add("registry.example.com/agent:2");
    assertThat(Drift.reason(claim, pool, nodeClass)).isEqualTo("NodeClassDrifted");
  }

  @Test
  void aNodeOnAnotherImageThanTheNodeClassNamesIsImageDrift() {
    NodeClaim claim = claim();
    claim.setStatus(new NodeClaim.Status());
    claim.getStatus().imageID = "v1.20.2-aaaaaaaaaaaa";
    assertThat(Drift.reason(claim, pool, nodeClass)).as("no image named: any will do").isNull();
    nodeClass.getSpec().image = "v1.20.2-aaaaaaaaaaaa";
    assertThat(Drift.reason(claim, pool, nodeClass)).isNull();
    // A new image: only the node not on it drifts (the image is not in the node class's hash).
    nodeClass.getSpec().image = "v1.20.2-bbbbbbbbbbbb";
    assertThat(Drift.reason(claim, pool, nodeClass)).isEqualTo("ImageDrift");
    NodeClaim onIt = claim();
    onIt.setStatus(new NodeClaim.Status());
    onIt.getStatus().imageID = "v1.20.2-bbbbbbbbbbbb";
    assertThat(Drift.reason(onIt, pool, nodeClass)).isNull();
    // A machine that reported no image (not booted from WarmMetal's) is not held against it.
    assertThat(Drift.reason(claim(), pool, nodeClass)).isNull();
  }
}
