package io.warmmetal.controller.claims;

import io.fabric8.kubernetes.client.informers.cache.Store;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The NodeClaims of this controller as its informer has them, with what the controller itself wrote
 * laid over them until the informer catches up — read-your-writes, so a claim created a moment ago
 * is planned against (its pods not planned twice) and one deleted is planned without, with no list
 * from the API server. Every read is a copy: callers may change what they read.
 *
 * <p>A write's answer can come after the informer's event for it — even after the claim's deletion
 * — so a claim seen deleted (by the informer, or in the answer that dropped its last finalizer) is
 * remembered for {@link #GONE_FOR}: neither a late write nor the informer's older version brings it
 * back. Laid over for good, it would be a claim "being deleted" forever, counted against every
 * disruption budget. No write stands longer than {@link #WRITE_STANDS_FOR} either: the informer has
 * caught up long before, or its view is the truth there is.
 */
public final class NodeClaims {
  private static final KubernetesSerialization COPIES = new KubernetesSerialization();

  private final Store<NodeClaim> informer;
  private final Clock clock;

  /** How long a claim the informer saw deleted is remembered: late writes about it are dropped. */
  static final Duration GONE_FOR = Duration.ofMinutes(10);

  /** How long a write is laid over the informer's view at most. */
  static final Duration WRITE_STANDS_FOR = Duration.ofMinutes(2);

  /** A claim as this controller wrote it, and when. */
  private record Written(NodeClaim claim, Instant at) {}

  /** Claims as this controller last wrote them, newer than the informer's (by name). */
  private final Map<String, Written> written = new ConcurrentHashMap<>();

  /** The UIDs of claims the informer saw deleted, and when. */
  private final Map<String, Instant> gone = new ConcurrentHashMap<>();

  public NodeClaims(Store<NodeClaim> informer, Clock clock) {
    this.informer = informer;
    this.clock = clock;
  }

  /** Every claim of ours. */
  public List<NodeClaim> list() {
    Map<String, NodeClaim> all = new LinkedHashMap<>();
    for (NodeClaim claim : informer.list()) {
      if (ours(claim) && !isGone(claim)) {
        all.put(claim.getMetadata().getName(), claim);
      }
    }
    written.forEach(
        (name, write) -> {
          NodeClaim mine = standing(name, write);
          NodeClaim seen = all.get(name);
          if (mine != null && (seen == null || newer(mine, seen))) {
            all.put(name, mine);
          }
        });
    List<NodeClaim> copies = new ArrayList<>(all.size());
    all.values().forEach(c -> copies.add(copy(c)));
    return copies;
  }

  /** The claim of that name, or null. */
  public NodeClaim get(String name) {
    NodeClaim newest = newest(name);
    return newest == null || !ours(newest) ? null : copy(newest);
  }

  /**
   * Whether the claim is ours, not being deleted and not launched yet — read without a copy: it is
   * asked on every informer event.
   */
  public boolean awaitingLaunch(String name) {
    NodeClaim newest = newest(name);
    return newest != null
        && ours(newest)
        && newest.getMetadata().getDeletionTimestamp() == null
        && (newest.getStatus() == null
            || !Conditions.isTrue(newest.getStatus().conditions, Conditions.LAUNCHED));
  }

  private NodeClaim newest(String name) {
    NodeClaim seen = informer.getByKey(name);
    if (seen != null && isGone(seen)) {
      seen = null; // deleted as a write of ours was answered; the informer has yet to see it
    }
    Written write = written.get(name);
    NodeClaim mine = write == null ? null : standing(name, write);
    return mine != null && (seen == null || newer(mine, seen)) ? mine : seen;
  }

  /** The write's claim if it still stands; else null (and it is dropped). */
  private NodeClaim standing(String name, Written write) {
    if (write.at().plus(WRITE_STANDS_FOR).isBefore(clock.instant())) {
      written.remove(name, write);
      return null;
    }
    return write.claim();
  }

  /**
   * What the API server answered a write of ours with. A claim being deleted with no finalizer left
   * is gone (the API server deleted it as it answered).
   */
  void wrote(NodeClaim claim) {
    if (claim == null) {
      return; // answered with no object (fabric8's mock server, as it deletes one): nothing to lay
    }
    if (claim.getMetadata().getDeletionTimestamp() != null
        && (claim.getMetadata().getFinalizers() == null
            || claim.getMetadata().getFinalizers().isEmpty())) {
      seen(claim, true);
      return;
    }
    lay(copy(claim));
  }

  /** Lays the claim over the informer's view, unless it is gone or what is there is newer. */
  private void lay(NodeClaim claim) {
    if (isGone(claim)) {
      return; // deleted before this answer came
    }
    Written write = new Written(claim, clock.instant());
    written.merge(
        claim.getMetadata().getName(),
        write,
        (old, now) -> newer(now.claim(), old.claim()) ? now : old);
  }

  /**
   * A claim this controller asked to delete: planned without from now on (as one being deleted)
   * until the informer shows so.
   */
  void deleting(NodeClaim claim) {
    NodeClaim deleting = copy(claim);
    if (deleting.getMetadata().getDeletionTimestamp() == null) {
      deleting.getMetadata().setDeletionTimestamp(clock.instant().toString());
    }
    lay(deleting);
  }

  /**
   * The informer saw this version (or the claim deleted, {@code claim} then its last state): what
   * we wrote up to it is not needed any more.
   */
  public void seen(NodeClaim claim, boolean deleted) {
    if (deleted && claim.getMetadata().getUid() != null) {
      Instant now = clock.instant();
      gone.values().removeIf(at -> at.plus(GONE_FOR).isBefore(now));
      gone.put(claim.getMetadata().getUid(), now);
    }
    written.computeIfPresent(
        claim.getMetadata().getName(),
        (name, mine) ->
            deleted && sameClaim(mine.claim(), claim) || !newer(mine.claim(), claim) ? null : mine);
  }

  private boolean isGone(NodeClaim claim) {
    String uid = claim.getMetadata().getUid();
    return uid != null && gone.containsKey(uid);
  }

  private static boolean sameClaim(NodeClaim a, NodeClaim b) {
    return Objects.equals(a.getMetadata().getUid(), b.getMetadata().getUid());
  }

  /** Whether the claim is this controller's (its node class is WarmMetal's), not another's. */
  public static boolean ours(NodeClaim claim) {
    return claim.getSpec() != null
        && claim.getSpec().nodeClassRef != null
        && WarmMetalNodeClass.KIND.equals(claim.getSpec().nodeClassRef.kind);
  }

  /**
   * Whether {@code a} is a later version than {@code b}: resourceVersions are etcd revisions,
   * compared as numbers (a deletion we asked for is later than anything before it).
   */
  private static boolean newer(NodeClaim a, NodeClaim b) {
    if (!Objects.equals(a.getMetadata().getUid(), b.getMetadata().getUid())) {
      return a.getMetadata().getCreationTimestamp() != null
          && b.getMetadata().getCreationTimestamp() != null
          && a.getMetadata()
                  .getCreationTimestamp()
                  .compareTo(b.getMetadata().getCreationTimestamp())
              > 0;
    }
    if (a.getMetadata().getDeletionTimestamp() != null
        && b.getMetadata().getDeletionTimestamp() == null) {
      return true;
    }
    return version(a) > version(b);
  }

  private static long version(NodeClaim claim) {
    try {
      return Long.parseLong(claim.getMetadata().getResourceVersion());
    } catch (NumberFormatException | NullPointerException opaque) {
      return Long.MIN_VALUE;
    }
  }

  private static NodeClaim copy(NodeClaim claim) {
    return COPIES.clone(claim);
  }
}
