package io.warmmetal.controller.claims;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeClassReference;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.testing.MapStore;
import io.warmmetal.controller.testing.MovingClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Read-your-writes over an informer that lags: what the controller wrote is read back at once, the
 * informer's view wins as soon as it has caught up, reads are copies, and another provider's claims
 * are not ours.
 */
class NodeClaimsTest {
  /** An informer's store the test moves by hand. */
  private final MapStore<NodeClaim> informer = new MapStore<>();

  private final MovingClock clock = new MovingClock(Instant.parse("2026-12-02T10:00:00Z"));
  private final NodeClaims claims = new NodeClaims(informer, clock);

  private static NodeClaim claim(String name, String version, String kind) {
    NodeClaim claim = new NodeClaim();
    claim.getMetadata().setName(name);
    claim.getMetadata().setUid("uid-" + name);
    claim.getMetadata().setResourceVersion(version);
    claim.getSpec().nodeClassRef = new NodeClassReference();
    claim.getSpec().nodeClassRef.kind = kind;
    return claim;
  }

  private static NodeClaim ours(String name, String version) {
    return claim(name, version, WarmMetalNodeClass.KIND);
  }

  @Test
  void aClaimJustCreatedIsReadBeforeTheInformerHasIt() {
    claims.wrote(ours("default-a", "10"));
    assertThat(claims.list())
        .extracting(c -> c.getMetadata().getName())
        .containsExactly("default-a");
    assertThat(claims.get("default-a")).isNotNull();

    informer.put(ours("default-a", "10"));
    claims.seen(informer.getByKey("default-a"), false);
    NodeClaim newer = ours("default-a", "12");
    newer.getMetadata().setLabels(Map.of("by", "informer"));
    informer.put(newer);
    assertThat(claims.get("default-a").getMetadata().getLabels()).containsEntry("by", "informer");
  }

  @Test
  void aWriteNewerThanTheInformersViewWinsUntilTheInformerCatchesUp() {
    informer.put(ours("default-a", "10"));
    NodeClaim launched = ours("default-a", "11");
    launched.getMetadata().setLabels(Map.of("launched", "yes"));
    claims.wrote(launched);
    assertThat(claims.get("default-a").getMetadata().getLabels()).containsEntry("launched", "yes");

    claims.seen(ours("default-a", "10"), false); // an older event: the write still stands
    assertThat(claims.list().get(0).getMetadata().getLabels()).containsEntry("launched", "yes");

    NodeClaim caughtUp = ours("default-a", "11");
    caughtUp.getMetadata().setLabels(Map.of("launched", "yes", "seen", "yes"));
    informer.put(caughtUp);
    claims.seen(caughtUp, false);
    assertThat(claims.get("default-a").getMetadata().getLabels()).containsEntry("seen", "yes");
  }

  @Test
  void aClaimDeletedIsPlannedWithoutUntilTheInformerSaysSo() {
    NodeClaim live = ours("default-a", "10");
    informer.put(live);
    claims.deleting(live);
    assertThat(claims.get("default-a").getMetadata().getDeletionTimestamp()).isNotNull();

    informer.remove("default-a");
    claims.seen(live, true);
    assertThat(claims.list()).isEmpty();
    assertThat(claims.get("default-a")).isNull();
  }

  @Test
  void anOlderVersionBeingDeletedDoesNotHideTheFinalizerWeRemoved() {
    NodeClaim deleting = ours("default-a", "20");
    deleting.getMetadata().setDeletionTimestamp("2026-12-02T10:00:00Z");
    deleting.getMetadata().setFinalizers(List.of("karpenter.sh/termination"));
    informer.put(deleting);
    NodeClaim finished = ours("default-a", "21");
    finished.getMetadata().setDeletionTimestamp("2026-12-02T10:00:00Z");
    claims.wrote(finished); // termination dropped the finalizer

    claims.seen(deleting, false); // the informer's event for the version before
    assertThat(claims.get("default-a"))
        .as("termination is not run again on a claim it finished: the API server deleted it")
        .isNull();
    assertThat(claims.list()).isEmpty();
  }

  @Test
  void aWriteAnsweredAfterTheInformerSawTheClaimDeletedDoesNotBringItBack() {
    NodeClaim deleting = ours("default-a", "20");
    deleting.getMetadata().setDeletionTimestamp("2026-12-02T10:00:00Z");
    deleting.getMetadata().setFinalizers(List.of("karpenter.sh/termination"));
    informer.put(deleting);
    // Termination's write takes the finalizer off; the informer's deletion comes before its answer.
    informer.remove("default-a");
    claims.seen(deleting, true);
    NodeClaim drained = ours("default-a", "21");
    drained.getMetadata().setDeletionTimestamp("2026-12-02T10:00:00Z");
    drained.getMetadata().setFinalizers(List.of("karpenter.sh/termination"));
    claims.wrote(drained); // a condition written just before, answered late too
    claims.deleting(deleting);

    assertThat(claims.list()).as("no claim being deleted forever").isEmpty();
    assertThat(claims.get("default-a")).isNull();
    assertThat(claims.awaitingLaunch("default-a")).isFalse();
  }

  @Test
  void aClaimOfTheSameNameMadeAfterOneWasDeletedIsReadAsNew() {
    NodeClaim old = ours("default-a", "20");
    informer.put(old);
    informer.remove("default-a");
    claims.seen(old, true);

    NodeClaim again = ours("default-a", "30");
    again.getMetadata().setUid("uid-again");
    claims.wrote(again);
    assertThat(claims.get("default-a").getMetadata().getUid()).isEqualTo("uid-again");
  }

  @Test
  void aWriteTheInformerNeverShowsStopsStanding() {
    claims.wrote(ours("default-a", "10"));
    clock.advance(NodeClaims.WRITE_STANDS_FOR.minusSeconds(1));
    assertThat(claims.list()).hasSize(1);

    clock.advance(Duration.ofSeconds(2));
    assertThat(claims.list()).as("the informer's view is the truth there is").isEmpty();
    assertThat(claims.get("default-a")).isNull();
  }

  @Test
  void readsAreCopiesAndOnlyOursAreListed() {
    informer.put(ours("default-a", "10"));
    informer.put(claim("karpenter-b", "11", "EC2NodeClass"));
    NodeClaim read = claims.get("default-a");
    read.getMetadata().setLabels(Map.of("changed", "by a caller"));
    assertThat(claims.get("default-a").getMetadata().getLabels()).isNullOrEmpty();
    assertThat(claims.list())
        .extracting(c -> c.getMetadata().getName())
        .containsExactly("default-a");
    assertThat(claims.get("karpenter-b")).isNull();
  }
}
