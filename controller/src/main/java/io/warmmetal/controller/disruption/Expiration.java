package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Node;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.events.KarpenterEvents;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.GoDuration;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.state.ClusterState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NodeClaims past their {@code expireAfter}, deleted as upstream's expiration controller deletes
 * them: forcefully — no budgets, no simulation, whatever their pods (termination drains them).
 */
final class Expiration {
  private static final Logger LOG = LoggerFactory.getLogger(Expiration.class);

  /** Karpenter's default {@code expireAfter}. */
  static final Duration DEFAULT_EXPIRE_AFTER = Duration.ofHours(720);

  private final NodeClaimWriter writer;
  private final Recorder events;
  private final KarpenterMetrics metrics;

  Expiration(NodeClaimWriter writer, Recorder events, KarpenterMetrics metrics) {
    this.writer = writer;
    this.events = events;
    this.metrics = metrics;
  }

  /** Whether the claim has lived longer than its {@code expireAfter} ({@code Never}: never). */
  static boolean expired(NodeClaim claim, Instant now) {
    String after = claim.getSpec().expireAfter;
    if ("Never".equals(after) || claim.getMetadata().getCreationTimestamp() == null) {
      return false;
    }
    Duration lifetime =
        GoDuration.parseOr(after, DEFAULT_EXPIRE_AFTER, null); // invalid: never, not a failed pass
    return lifetime != null
        && now.isAfter(Instant.parse(claim.getMetadata().getCreationTimestamp()).plus(lifetime));
  }

  /**
   * How the claim's node will be drained, as upstream labels a disruption: {@code graceful} without
   * a {@code terminationGracePeriod}, {@code forceful} with one of zero, {@code eventual} else.
   */
  static String terminationMode(NodeClaim claim) {
    Duration grace = GoDuration.parseOr(claim.getSpec().terminationGracePeriod, null, null);
    if (grace == null) {
      return "graceful";
    }
    return grace.isZero() || grace.isNegative() ? "forceful" : "eventual";
  }

  /** Deletes the expired claim, counting and telling it as upstream does. */
  void expire(NodeClaim claim, List<Node> nodes, Instant now) {
    LOG.info(
        "NodeClaim {} expired (expireAfter {})",
        claim.getMetadata().getName(),
        claim.getSpec().expireAfter);
    writer.delete(claim);
    // As upstream's: no consolidation policy for expiry, the mode the claim's grace period says.
    metrics.nodeClaimDisrupted("expired", Candidate.poolOf(claim), "", terminationMode(claim));
    events.publish(
        KarpenterEvents.disruptionTerminating(ClusterState.nodeOf(claim, nodes), claim, "expired"));
    claim.getMetadata().setDeletionTimestamp(now.toString()); // gone for the rest of this pass
  }
}
