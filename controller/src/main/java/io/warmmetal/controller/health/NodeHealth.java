package io.warmmetal.controller.health;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.cloudprovider.RepairPolicy;
import io.warmmetal.controller.events.KarpenterEvents;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.GoDuration;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Node repair, as upstream's {@code node.health} controller (behind the {@code NodeRepair} feature
 * gate): a Node showing a condition one of the cloud provider's {@link RepairPolicy repair
 * policies} names, for at least its toleration (from the condition's {@code lastTransitionTime}),
 * has its NodeClaim deleted forcefully — the claim's termination timestamp set to now first, so its
 * drain waits for no budget, do-not-disrupt pod or {@code terminationGracePeriod}; the NodePool's
 * disruption budgets do not count. Unless more than 20% (rounded up) of its NodePool's Nodes — of
 * the cluster's, for a claim of no NodePool — show an unhealthy condition: then the repair is held
 * back ({@code NodeRepairBlocked}) and tried again in 5 minutes, since a fault that broad is rarely
 * the nodes'. Asked by each claim's lifecycle, which its Node's events wake, and which looks again
 * when the toleration runs out.
 */
public final class NodeHealth {
  private static final Logger LOG = LoggerFactory.getLogger(NodeHealth.class);

  /** Upstream's {@code allowedUnhealthyPercent}. */
  static final int ALLOWED_UNHEALTHY_PERCENT = 20;

  /** Upstream's message when its NodePool is over the cap. */
  static final String BLOCKED_IN_NODEPOOL = "more than 20% nodes are unhealthy in the nodepool";

  /** Upstream's message for a claim of no NodePool, its spelling too. */
  static final String BLOCKED_IN_CLUSTER = "more then 20% nodes are unhealthy in the cluster";

  /** How soon a repair held back by the cap is tried again (upstream's requeue). */
  static final Duration BLOCKED_RECHECK = Duration.ofMinutes(5);

  /** Go's zero time: a condition without a transition time is as old as can be, as upstream's. */
  private static final Instant GO_ZERO_TIME = Instant.parse("0001-01-01T00:00:00Z");

  private static final Pattern FIRST_CAP = Pattern.compile("(.)([A-Z][a-z]+)");
  private static final Pattern ALL_CAP = Pattern.compile("([a-z0-9])([A-Z])");

  private final CloudProvider cloud;
  private final NodeClaimWriter writer;
  private final Supplier<List<Node>> nodes;
  private final Function<String, NodePool> pools;
  private final Recorder events;
  private final KarpenterMetrics metrics;
  private final Clock clock;

  /**
   * What looking at a claim's Node came to.
   *
   * @param wrote the claim was annotated or deleted: its informer event brings the next step
   * @param lookAgainIn when the Node is to be looked at again (null: on its next change)
   */
  public record Outcome(boolean wrote, Duration lookAgainIn) {
    static final Outcome NOTHING = new Outcome(false, null);
  }

  /** The condition a policy calls unhealthy, and when its toleration runs out. */
  private record Unhealthy(NodeCondition condition, Instant repairAt) {}

  /**
   * @param nodes every Node, as the informer has them (the cap counts them)
   * @param pools the NodePool of that name, or null
   */
  public NodeHealth(
      CloudProvider cloud,
      NodeClaimWriter writer,
      Supplier<List<Node>> nodes,
      Function<String, NodePool> pools,
      Recorder events,
      KarpenterMetrics metrics,
      Clock clock) {
    this.cloud = cloud;
    this.writer = writer;
    this.nodes = nodes;
    this.pools = pools;
    this.events = events;
    this.metrics = metrics;
    this.clock = clock;
  }

  /** Repairs the claim's Node if it has been unhealthy long enough and the cap allows. */
  public Outcome check(NodeClaim claim, Node node) {
    Unhealthy unhealthy = soonestToRepair(node);
    if (unhealthy == null) {
      return Outcome.NOTHING;
    }
    Instant now = clock.instant();
    if (now.isBefore(unhealthy.repairAt())) {
      return new Outcome(false, Duration.between(now, unhealthy.repairAt()));
    }
    String poolName = poolOf(claim.getMetadata().getLabels());
    if (!fewUnhealthy(poolName)) {
      publishBlocked(node, claim, poolName);
      return new Outcome(false, BLOCKED_RECHECK);
    }
    try {
      boolean annotated = annotateTerminationTime(claim, now);
      if (claim.getMetadata().getDeletionTimestamp() != null) {
        return new Outcome(annotated, null); // being deleted already: now forcefully
      }
      writer.delete(claim);
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return Outcome.NOTHING; // gone meanwhile
      }
      throw e;
    }
    LOG.info(
        "Deleting unhealthy node {} (NodeClaim {}): {}={} since {}",
        node.getMetadata().getName(),
        claim.getMetadata().getName(),
        unhealthy.condition().getType(),
        unhealthy.condition().getStatus(),
        unhealthy.condition().getLastTransitionTime());
    count(claim, node, unhealthy.condition());
    return new Outcome(true, null);
  }

  /**
   * Of the conditions a policy calls unhealthy, the one whose toleration runs out first (the first
   * policy's on a tie); null: none.
   */
  private Unhealthy soonestToRepair(Node node) {
    Unhealthy soonest = null;
    for (RepairPolicy policy : cloud.repairPolicies()) {
      NodeCondition condition = matching(node, policy);
      if (condition != null) {
        Instant repairAt = transitionTime(condition).plus(policy.tolerationDuration());
        if (soonest == null || soonest.repairAt().isAfter(repairAt)) {
          soonest = new Unhealthy(condition, repairAt);
        }
      }
    }
    return soonest;
  }

  /** The Node's condition of the policy's type, if it has the policy's status. */
  private static NodeCondition matching(Node node, RepairPolicy policy) {
    if (node.getStatus() == null || node.getStatus().getConditions() == null) {
      return null;
    }
    return node.getStatus().getConditions().stream()
        .filter(c -> policy.conditionType().equals(c.getType()))
        .findFirst()
        .filter(c -> policy.conditionStatus().equals(c.getStatus()))
        .orElse(null);
  }

  private static Instant transitionTime(NodeCondition condition) {
    String at = condition.getLastTransitionTime();
    return at == null || at.isEmpty() ? GO_ZERO_TIME : Instant.parse(at);
  }

  /**
   * Whether at most 20%, rounded up, of the NodePool's Nodes (every Node for none) show a condition
   * a policy calls unhealthy, however long: one of three may, two of ten may, three may not
   * (upstream rounds as a PodDisruptionBudget's {@code maxUnavailable}).
   */
  private boolean fewUnhealthy(String poolName) {
    List<RepairPolicy> policies = cloud.repairPolicies();
    int total = 0;
    int unhealthy = 0;
    for (Node node : nodes.get()) {
      if (poolName == null || poolName.equals(poolOf(node.getMetadata().getLabels()))) {
        total++;
        if (policies.stream().anyMatch(p -> matching(node, p) != null)) {
          unhealthy++;
        }
      }
    }
    int allowed = (ALLOWED_UNHEALTHY_PERCENT * total + 99) / 100;
    return unhealthy <= allowed;
  }

  /** Upstream's NodeRepairBlocked, with its messages. */
  private void publishBlocked(Node node, NodeClaim claim, String poolName) {
    if (poolName == null) {
      events.publish(KarpenterEvents.nodeRepairBlocked(node, claim, null, BLOCKED_IN_CLUSTER));
      return;
    }
    NodePool pool = pools.apply(poolName);
    if (pool != null) { // upstream tells nothing when the NodePool is gone
      events.publish(KarpenterEvents.nodeRepairBlocked(node, claim, pool, BLOCKED_IN_NODEPOOL));
    }
  }

  /**
   * Sets the claim's termination timestamp to now (RFC 3339, to the second, as upstream), unless it
   * is already past; whether it wrote.
   */
  private boolean annotateTerminationTime(NodeClaim claim, Instant now) {
    String annotated =
        orEmpty(claim.getMetadata().getAnnotations())
            .get(WellKnown.TERMINATION_TIMESTAMP_ANNOTATION);
    if (annotated != null && isBefore(annotated, now)) {
      return false;
    }
    String terminationTime = now.truncatedTo(ChronoUnit.SECONDS).toString();
    if (terminationTime.equals(annotated)) {
      return false;
    }
    writer.annotate(claim, Map.of(WellKnown.TERMINATION_TIMESTAMP_ANNOTATION, terminationTime));
    LOG.info(
        "Annotated NodeClaim {} {}={}",
        claim.getMetadata().getName(),
        WellKnown.TERMINATION_TIMESTAMP_ANNOTATION,
        terminationTime);
    return true;
  }

  private static boolean isBefore(String rfc3339, Instant now) {
    try {
      return OffsetDateTime.parse(rfc3339).toInstant().isBefore(now);
    } catch (DateTimeParseException unreadable) {
      return false; // upstream overwrites what it cannot read
    }
  }

  /** Upstream's counts: a disruption for reason {@code unhealthy}, and which condition it was. */
  private void count(NodeClaim claim, Node node, NodeCondition condition) {
    Map<String, String> nodeLabels = orEmpty(node.getMetadata().getLabels());
    String pool = poolOf(nodeLabels);
    metrics.nodeClaimDisrupted("unhealthy", pool, "", terminationMode(claim));
    metrics.nodeClaimUnhealthyDisrupted(
        snakeCase(condition.getType()),
        pool,
        nodeLabels.get(WellKnown.CAPACITY_TYPE_LABEL),
        claim.getStatus() == null ? null : claim.getStatus().imageID);
  }

  /**
   * Upstream's {@code DisruptionTerminationMode}: by the claim's {@code terminationGracePeriod} —
   * none graceful, zero forceful, else eventual.
   */
  static String terminationMode(NodeClaim claim) {
    Duration grace = GoDuration.parseOr(claim.getSpec().terminationGracePeriod, null, null);
    if (grace == null) {
      return "graceful";
    }
    return grace.isZero() || grace.isNegative() ? "forceful" : "eventual";
  }

  /** Upstream's {@code pretty.ToSnakeCase}: {@code AcceleratedHardwareReady} → its snake case. */
  static String snakeCase(String name) {
    String snake = FIRST_CAP.matcher(name).replaceAll("$1_$2");
    return ALL_CAP.matcher(snake).replaceAll("$1_$2").toLowerCase(Locale.ROOT);
  }

  private static String poolOf(Map<String, String> labels) {
    return orEmpty(labels).get(WellKnown.NODEPOOL_LABEL);
  }

  /** Labels or annotations, none as empty. */
  private static Map<String, String> orEmpty(Map<String, String> map) {
    return Objects.requireNonNullElse(map, Map.of());
  }
}
