package io.warmmetal.controller.claims;

import io.fabric8.kubernetes.client.informers.cache.Store;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.time.Clock;
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
 */
public final class NodeClaims {
  private static final KubernetesSerialization COPIES = new KubernetesSerialization();

  private final Store<NodeClaim> informer;
  private final Clock clock;

  /** Claims as this controller last wrote them, newer than the informer's (by name). */
  private final Map<String, NodeClaim> written = new ConcurrentHashMap<>();

  public NodeClaims(Store<NodeClaim> informer, Clock clock) {
    this.informer = informer;
    this.clock = clock;
  }

  /** Every claim of ours. */
  public List<NodeClaim> list() {
    Map<String, NodeClaim> all = new LinkedHashMap<>();
    for (NodeClaim claim : informer.list()) {
      if (ours(claim)) {
        all.put(claim.getMetadata().getName(), claim);
      }
    }
    written.forEach(
        (name, mine) -> {
          NodeClaim seen = all.get(name);
          if (seen == null || newer(mine, seen)) {
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
    NodeClaim mine = written.get(name);
    return mine != null && (seen == null || newer(mine, seen)) ? mine : seen;
  }

  /** What the API server answered a write of ours with. */
  void wrote(NodeClaim claim) {
    written.merge(
        claim.getMetadata().getName(), copy(claim), (old, now) -> newer(now, old) ? now : old);
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
    written.put(claim.getMetadata().getName(), deleting);
  }

  /**
   * The informer saw this version (or the claim gone, {@code claim} then its last state): what we
   * wrote up to it is not needed any more.
   */
  public void seen(NodeClaim claim, boolean gone) {
    written.computeIfPresent(
        claim.getMetadata().getName(), (name, mine) -> gone || !newer(mine, claim) ? null : mine);
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
