package io.warmmetal.controller.termination;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.claims.NodeClaims;
import io.warmmetal.controller.cloudprovider.FakeCloudProvider;
import io.warmmetal.controller.cloudprovider.Instance;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeClassReference;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.testing.MapStore;
import io.warmmetal.controller.testing.MovingClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Garbage collection both ways, as upstream's: an instance whose NodeClaim is gone is terminated; a
 * launched NodeClaim whose instance is gone is deleted (termination takes it from there) — each
 * only past its grace, so a launch in flight is never mistaken for either.
 */
@EnableKubernetesMockClient(crud = true)
class OrphansTest {
  KubernetesClient kube;
  private final FakeCloudProvider cloud = new FakeCloudProvider();
  private final MovingClock clock = new MovingClock(Instant.parse("2026-12-02T12:00:00Z"));
  private final WarmMetalNodeClass nodeClass = new WarmMetalNodeClass();
  private Orphans orphans;

  @BeforeEach
  void start() {
    nodeClass.getMetadata().setName("default");
    orphans =
        new Orphans(
            cloud,
            new NodeClaimWriter(kube, new NodeClaims(new MapStore<>(), clock)),
            clock,
            Orphans.GRACE,
            Duration.ZERO);
  }

  /** A claim of the node class, launched (its instance created through the fake) at {@code at}. */
  private NodeClaim launched(String name, Instant at) throws Exception {
    NodeClaim claim = new NodeClaim();
    claim.getMetadata().setName(name);
    claim.getMetadata().setFinalizers(List.of(WellKnown.TERMINATION_FINALIZER));
    claim.getMetadata().setLabels(Map.of(WellKnown.NODEPOOL_LABEL, "default"));
    claim.getSpec().nodeClassRef = new NodeClassReference();
    claim.getSpec().nodeClassRef.kind = WarmMetalNodeClass.KIND;
    claim.getSpec().nodeClassRef.name = "default";
    NodeClaim created = kube.resources(NodeClaim.class).resource(claim).create();
    Instance instance = cloud.create(created).instance();
    created.setStatus(new NodeClaim.Status());
    created.getStatus().providerID = instance.providerId();
    Conditions.set(created.getStatus().conditions, Conditions.LAUNCHED, true, "Launched", "");
    Conditions.get(created.getStatus().conditions, Conditions.LAUNCHED)
        .setLastTransitionTime(at.toString());
    return created;
  }

  private void terminateInstanceOf(NodeClaim claim) throws Exception {
    cloud.terminate(
        nodeClass,
        cloud.instances().stream()
            .filter(i -> i.providerId().equals(claim.getStatus().providerID))
            .findFirst()
            .orElseThrow()
            .id());
  }

  private boolean deleting(NodeClaim claim) {
    NodeClaim now = kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).get();
    return now == null || now.getMetadata().getDeletionTimestamp() != null;
  }

  @Test
  void aLaunchedClaimWhoseInstanceIsGoneIsDeletedOnceItsGraceIsOver() throws Exception {
    NodeClaim kept = launched("default-kept", clock.instant());
    NodeClaim lost = launched("default-lost", clock.instant());
    NodeClaim late = launched("default-late", clock.instant().plusSeconds(5));
    terminateInstanceOf(lost); // through the API, say
    terminateInstanceOf(late);
    List<NodeClaim> claims = new ArrayList<>(List.of(kept, lost, late));

    clock.advance(Orphans.LAUNCHED_GRACE.minusSeconds(1));
    orphans.reconcile(claims, List.of(nodeClass));
    assertThat(claims).noneMatch(this::deleting); // a launch may be listed a moment late

    clock.advance(Duration.ofSeconds(2));
    orphans.reconcile(claims, List.of(nodeClass));
    assertThat(deleting(kept)).as("its instance is there").isFalse();
    assertThat(deleting(lost)).as("its instance is gone").isTrue();
    assertThat(deleting(late)).as("launched 5 s later: still in its grace").isFalse();

    clock.advance(Duration.ofSeconds(5));
    orphans.reconcile(claims, List.of(nodeClass));
    assertThat(deleting(late)).isTrue();
  }

  @Test
  void anInstanceWhoseClaimIsGoneIsTerminatedOnceItsGraceIsOver() throws Exception {
    NodeClaim gone = launched("default-gone", clock.instant());
    String instance = cloud.instances().get(0).id();
    orphans.reconcile(List.of(), List.of(nodeClass));
    // The fake's instances were created at the epoch: long past the grace.
    assertThat(cloud.terminated).containsExactly(instance);
    assertThat(deleting(gone)).as("no claim of this pass's list to delete").isFalse();
  }
}
