package io.warmmetal.controller.lifecycle;

import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.GoDuration;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.pools.RegistrationHealth;
import io.warmmetal.controller.state.Definitions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A launched claim whose Node has not registered within the node class's {@code
 * registrationTimeout} (default 15 minutes, as Karpenter; bare metal may want more or, with warm
 * machines, far less) is given up, as upstream's liveness: the claim is deleted, its termination
 * terminates the instance (the machine resets and returns to its pool), and its pods are planned
 * again.
 */
final class Liveness {
  private static final Logger LOG = LoggerFactory.getLogger(Liveness.class);
  static final Duration DEFAULT_REGISTRATION_TIMEOUT = Duration.ofMinutes(15);

  private final Definitions defs;
  private final NodeClaimWriter writer;
  private final RegistrationHealth health;
  private final Clock clock;

  Liveness(Definitions defs, NodeClaimWriter writer, RegistrationHealth health, Clock clock) {
    this.defs = defs;
    this.writer = writer;
    this.health = health;
    this.clock = clock;
  }

  /** Gives the unregistered claim up if it is late; else how long it has left (null: unknown). */
  Duration check(NodeClaim claim) {
    WarmMetalNodeClass nodeClass = defs.nodeClass(claim.getSpec());
    Instant launchedAt =
        claim.getStatus() == null
            ? null
            : claim.getStatus().conditions.stream()
                .filter(c -> Conditions.LAUNCHED.equals(c.getType()))
                .map(c -> c.getLastTransitionTime())
                .filter(t -> t != null)
                .map(Instant::parse)
                .findFirst()
                .orElse(null);
    if (nodeClass == null || launchedAt == null) {
      return null;
    }
    Duration limit =
        GoDuration.parseOr(
            nodeClass.getSpec().registrationTimeout,
            DEFAULT_REGISTRATION_TIMEOUT,
            DEFAULT_REGISTRATION_TIMEOUT);
    Duration left = Duration.between(clock.instant(), launchedAt.plus(limit));
    if (!left.isNegative()) {
      return left.plusMillis(100);
    }
    LOG.info(
        "NodeClaim {}: no Node registered within {}; giving it up",
        claim.getMetadata().getName(),
        limit);
    health.failed(
        claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL),
        "Failed to register node: NodeClaim "
            + claim.getMetadata().getName()
            + " had no Node within "
            + limit);
    writer.delete(claim);
    return null;
  }
}
