package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Node;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.Cron;
import io.warmmetal.controller.karpenter.GoDuration;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A NodePool's disruption budgets, as Karpenter reads them: each budget caps the nodes being
 * disrupted at once (a count, or a percentage of the pool's nodes rounded up), for the reasons it
 * names (all if none), while its cron {@code schedule} window of {@code duration} is open (always
 * if none). The tightest active budget wins; a pool without budgets gets Karpenter's default of
 * 10%. An instance is one method's view in one pass, as upstream's disruption budget mapping: how
 * many more nodes of each pool it may take, counting those going already.
 */
final class NodePoolBudgets {
  private static final Logger LOG = LoggerFactory.getLogger(NodePoolBudgets.class);
  static final List<String> REASONS = List.of("Empty", "Underutilized", "Drifted");
  private static final NodePool.Budget DEFAULT = new NodePool.Budget();

  static {
    DEFAULT.nodes = "10%";
  }

  private final String reason;
  private final List<NodeClaim> claims;
  private final Map<String, Node> nodes;
  private final Instant now;

  /** How many more each pool may lose, worked out when first asked and counted down as taken. */
  private final Map<String, Integer> left = new HashMap<>();

  /**
   * @param claims every NodeClaim, those being deleted or replaced among them (they count as
   *     disrupting)
   * @param nodes the Nodes by name: a claim whose Node is not Ready counts as disrupting
   */
  NodePoolBudgets(String reason, List<NodeClaim> claims, Map<String, Node> nodes, Instant now) {
    this.reason = reason;
    this.claims = claims;
    this.nodes = nodes;
    this.now = now;
  }

  /** Whether each candidate's pool's budget allows that many more at once. */
  boolean allows(List<Candidate> candidates) {
    Map<String, Integer> wanted = new HashMap<>();
    Map<String, NodePool> pools = new HashMap<>();
    for (Candidate c : candidates) {
      wanted.merge(c.poolName(), 1, Integer::sum);
      pools.put(c.poolName(), c.pool());
    }
    for (Map.Entry<String, Integer> e : wanted.entrySet()) {
      if (left(pools.get(e.getKey())) < e.getValue()) {
        LOG.debug(
            "{} node(s) of NodePool {}: {}, but its disruption budget allows no more now",
            e.getValue(),
            e.getKey(),
            reason);
        return false;
      }
    }
    return true;
  }

  /** Takes the candidates from their pools' budgets if they allow them; whether they did. */
  boolean take(List<Candidate> candidates) {
    if (!allows(candidates)) {
      return false;
    }
    candidates.forEach(c -> left.computeIfPresent(c.poolName(), (pool, n) -> n - 1));
    return true;
  }

  private int left(NodePool pool) {
    return left.computeIfAbsent(
        pool.getMetadata().getName(),
        name -> {
          List<NodeClaim> ofPool = counted(claims, name);
          int disrupting = (int) ofPool.stream().filter(c -> disrupting(c, nodes)).count();
          return allowed(pool, reason, ofPool.size(), disrupting, now);
        });
  }

  /**
   * How many more nodes each NodePool may disrupt now, per reason: upstream's {@code
   * karpenter_nodepools_allowed_disruptions}.
   */
  static Map<String, Map<String, Integer>> allowedByReason(
      Collection<NodePool> pools, List<NodeClaim> claims, Map<String, Node> nodes, Instant now) {
    Map<String, Map<String, Integer>> allowed = new HashMap<>();
    for (NodePool pool : pools) {
      String name = pool.getMetadata().getName();
      List<NodeClaim> ofPool = counted(claims, name);
      int disrupting = (int) ofPool.stream().filter(c -> disrupting(c, nodes)).count();
      Map<String, Integer> byReason = new HashMap<>();
      for (String reason : REASONS) {
        int n = allowed(pool, reason, ofPool.size(), disrupting, now);
        byReason.put(reason, n == Integer.MAX_VALUE ? ofPool.size() : n);
      }
      allowed.put(name, byReason);
    }
    return allowed;
  }

  /** How many of each NodePool's nodes are being disrupted now: what they take from its budgets. */
  static Map<String, Integer> disruptingByPool(
      Collection<NodePool> pools, List<NodeClaim> claims, Map<String, Node> nodes) {
    Map<String, Integer> disrupting = new HashMap<>();
    for (NodePool pool : pools) {
      String name = pool.getMetadata().getName();
      disrupting.put(
          name, (int) counted(claims, name).stream().filter(c -> disrupting(c, nodes)).count());
    }
    return disrupting;
  }

  /**
   * The pool's nodes a budget's percentage is of, as upstream counts them: initialized (a node on
   * its way holds no pods yet, and would let more active ones go), its instance not terminating.
   */
  private static List<NodeClaim> counted(List<NodeClaim> claims, String pool) {
    return claims.stream()
        .filter(c -> pool.equals(Candidate.poolOf(c)) && Candidate.initialized(c))
        .filter(c -> !Conditions.isTrue(c.getStatus().conditions, Conditions.INSTANCE_TERMINATING))
        .toList();
  }

  /** Being deleted, in a command under way, or its Node not Ready: it takes from the budget. */
  private static boolean disrupting(NodeClaim claim, Map<String, Node> nodes) {
    Node node = nodes.get(claim.getStatus().nodeName);
    return claim.getMetadata().getDeletionTimestamp() != null
        || Commands.underway(claim)
        || node == null
        || node.getStatus() == null
        || node.getStatus().getConditions() == null
        || node.getStatus().getConditions().stream()
            .noneMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /** How many more of the pool's {@code nodes} may be disrupted for {@code reason} now. */
  static int allowed(NodePool pool, String reason, int nodes, int disrupting, Instant now) {
    List<NodePool.Budget> budgets =
        pool.getSpec().disruption == null
                || pool.getSpec().disruption.budgets == null
                || pool.getSpec().disruption.budgets.isEmpty()
            ? List.of(DEFAULT)
            : pool.getSpec().disruption.budgets;
    int cap = Integer.MAX_VALUE;
    for (NodePool.Budget b : budgets) {
      if (b.reasons != null && !b.reasons.isEmpty() && !b.reasons.contains(reason)) {
        continue;
      }
      try {
        if (b.schedule != null
            && !Cron.parse(b.schedule)
                .activeAt(
                    now.atZone(ZoneOffset.UTC), GoDuration.parse(b.duration, Duration.ZERO))) {
          continue;
        }
      } catch (IllegalArgumentException e) {
        // A budget we cannot read blocks disruption of its pool rather than being ignored (safe
        // side).
        LOG.warn(
            "NodePool {}: budget schedule '{}': {}",
            pool.getMetadata().getName(),
            b.schedule,
            e.getMessage());
        return 0;
      }
      cap = Math.min(cap, value(b.nodes == null ? "10%" : b.nodes, nodes));
    }
    return cap == Integer.MAX_VALUE ? Integer.MAX_VALUE : Math.max(0, cap - disrupting);
  }

  private static int value(String nodes, int total) {
    String s = nodes.trim();
    if (s.endsWith("%")) {
      return (int) Math.ceil(Integer.parseInt(s.substring(0, s.length() - 1)) * total / 100.0);
    }
    return Integer.parseInt(s);
  }
}
