package io.warmmetal.controller.lifecycle;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Quantity;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.events.KarpenterEvents;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import java.math.BigDecimal;
import java.math.MathContext;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Upstream's NodeClaim consistency check ({@code nodeclaim.consistency}), its one check, node
 * shape: an initialized claim's Node must report at least 90 % of each resource the claim requests
 * that its launch said the machine has ({@code status.capacity}) — a server that came up with a
 * failed DIMM or a disabled socket says so in a {@code FailedConsistencyCheck} Warning and {@code
 * ConsistentStateFound=False}; a sound one gets {@code ConsistentStateFound=True}. Each claim is
 * looked at once every {@link #SCAN_PERIOD}, however often its lifecycle is woken.
 */
final class Consistency {
  /** Upstream's scan period. */
  static final Duration SCAN_PERIOD = Duration.ofMinutes(10);

  /** Under this share of a resource expected, the Node is not what was launched. */
  private static final BigDecimal ENOUGH = new BigDecimal("0.90");

  private final NodeClaimWriter writer;
  private final Recorder events;
  private final Clock clock;
  private final Map<String, Instant> lastScanned = new ConcurrentHashMap<>();

  Consistency(NodeClaimWriter writer, Recorder events, Clock clock) {
    this.writer = writer;
    this.events = events;
    this.clock = clock;
  }

  /**
   * Checks the initialized claim's Node, unless done less than {@link #SCAN_PERIOD} ago; when to
   * look again.
   */
  Duration check(NodeClaim claim, Node node) {
    String name = claim.getMetadata().getName();
    Instant now = clock.instant();
    Instant last = lastScanned.get(name);
    if (last != null && now.isBefore(last.plus(SCAN_PERIOD))) {
      return Duration.between(now, last.plus(SCAN_PERIOD));
    }
    lastScanned.put(name, now);
    List<String> issues = nodeShape(claim, node);
    issues.forEach(issue -> events.publish(KarpenterEvents.failedConsistencyCheck(claim, issue)));
    if (!issues.isEmpty()) {
      writer.condition(
          claim,
          Conditions.CONSISTENT_STATE_FOUND,
          "False",
          "ConsistencyCheckFailed",
          "Consistency Check Failed");
    } else if (!Conditions.isTrue(
        claim.getStatus().conditions, Conditions.CONSISTENT_STATE_FOUND)) {
      writer.condition(
          claim, Conditions.CONSISTENT_STATE_FOUND, "True", Conditions.CONSISTENT_STATE_FOUND, "");
    }
    return SCAN_PERIOD;
  }

  /** Forgets a claim that is gone. */
  void forget(String name) {
    lastScanned.remove(name);
  }

  /**
   * Upstream's node shape check: each resource the claim requests, that its launch expected a
   * non-zero amount of, found on the Node at under 90 % of that.
   */
  static List<String> nodeShape(NodeClaim claim, Node node) {
    List<String> issues = new ArrayList<>();
    Map<String, Quantity> expected = claim.getStatus() == null ? null : claim.getStatus().capacity;
    Map<String, Quantity> requested =
        claim.getSpec().resources == null ? null : claim.getSpec().resources.requests;
    if (expected == null || requested == null) {
      return issues;
    }
    Map<String, Quantity> found =
        node.getStatus() == null || node.getStatus().getCapacity() == null
            ? Map.of()
            : node.getStatus().getCapacity();
    requested.forEach(
        (resource, asked) -> {
          Quantity promised = expected.get(resource);
          if (zero(asked) || zero(promised)) {
            return;
          }
          Quantity there = found.get(resource);
          BigDecimal share =
              (zero(there) ? BigDecimal.ZERO : there.getNumericalAmount())
                  .divide(promised.getNumericalAmount(), MathContext.DECIMAL64);
          if (share.compareTo(ENOUGH) < 0) {
            issues.add(
                String.format(
                    Locale.ROOT,
                    "expected %s of resource %s, but found %s (%.1f%% of expected)",
                    promised,
                    resource,
                    there == null ? "0" : there.toString(),
                    share.doubleValue() * 100));
          }
        });
    return issues;
  }

  private static boolean zero(Quantity q) {
    return q == null || q.getNumericalAmount().signum() == 0;
  }
}
