package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.events.KarpenterEvents;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.ClaimConditions;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.DoNotDisrupt;
import io.warmmetal.controller.karpenter.GoDuration;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.VirtualPod;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.provisioning.Provisioner;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.state.ClusterState;
import io.warmmetal.controller.state.Definitions;
import io.warmmetal.controller.state.PodRequests;
import io.warmmetal.controller.state.Pods;
import io.warmmetal.controller.termination.PodBudgets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes nodes away, as Karpenter's disruption controller does, by deleting their NodeClaims
 * (termination drains them): expired ones ({@code expireAfter}, forcefully: no budgets); then, one
 * decision at a time, drifted ones ({@link Drift}), replaced first where their pods need somewhere
 * to go; then — once a node has had no pod come or go for its pool's {@code consolidateAfter} —
 * empty ones; then under {@code WhenEmptyOrUnderutilized} several nodes whose pods fit on the
 * others and at most one new, cheaper node (multi-node consolidation), else one node whose pods fit
 * on the others or on one cheaper node (single-node). Pending pods take their place in the
 * simulation first: nothing is consolidated onto capacity they would use. Nodes with {@code
 * karpenter.sh/do-not-disrupt} (pods, for their time) are spared; every pool's disruption budgets
 * hold. Replacing decisions run as {@link Commands}.
 */
public final class Disruption {
  private static final Logger LOG = LoggerFactory.getLogger(Disruption.class);
  static final Duration DEFAULT_EXPIRE_AFTER = Duration.ofHours(720);

  /** Upstream's multi-node consolidation looks at up to this many nodes at once. */
  static final int MULTI_NODE_MAX = 10;

  /** How long one pass may spend simulating consolidations (the rest waits for the next pass). */
  static final Duration CONSOLIDATION_BUDGET = Duration.ofSeconds(2);

  /**
   * The cluster as it was when consolidation last found nothing to do (see {@code
   * Simulation#fingerprint}).
   */
  private String lastFruitless;

  private final KubernetesClient kube;
  private final Definitions defs;
  private final Scheduler scheduler;
  private final Provisioner provisioner;
  private final Recorder events;
  private final KarpenterMetrics metrics;
  private final Drift drift;
  private final Commands commands;

  /**
   * The pods last seen on each node: a change is a pod event, which restarts the consolidateAfter
   * clock.
   */
  private final Map<String, Set<String>> podsSeen = new HashMap<>();

  public Disruption(
      KubernetesClient kube,
      Definitions defs,
      Scheduler scheduler,
      Provisioner provisioner,
      Recorder events,
      KarpenterMetrics metrics) {
    this.defs = defs;
    this.events = events;
    this.metrics = metrics;
    this.kube = kube;
    this.scheduler = scheduler;
    this.provisioner = provisioner;
    this.drift = new Drift(kube, defs);
    this.commands = new Commands(kube, events);
  }

  /**
   * The nodes chosen, what replaces them (nothing: their pods fit on the nodes there are), and what
   * the replacements may cost at most together (a consolidation must save: no fallback shape as
   * dear as the candidates).
   */
  private record Decision(
      List<NodeClaim> candidates, List<Scheduler.PlannedNode> replacements, double priceBelow) {}

  public void reconcile(
      List<Pod> pods, List<Node> nodes, List<NodeClaim> claims, List<PodDisruptionBudget> pdbs)
      throws Exception {
    Instant now = Instant.now();
    drift.reconcile(claims);
    Map<String, List<Pod>> byNode = new HashMap<>();
    for (Pod pod : pods) {
      if (pod.getSpec() != null
          && pod.getSpec().getNodeName() != null
          && pod.getMetadata().getDeletionTimestamp() == null
          && !Pods.daemonOrMirror(pod)
          && !Pods.finished(pod)) {
        byNode.computeIfAbsent(pod.getSpec().getNodeName(), n -> new ArrayList<>()).add(pod);
      }
    }
    List<NodeClaim> live = new ArrayList<>();
    for (NodeClaim claim : claims) {
      if (claim.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      if (expired(claim, now)) {
        LOG.info(
            "NodeClaim {} expired (expireAfter {})",
            claim.getMetadata().getName(),
            claim.getSpec().expireAfter);
        kube.resources(NodeClaim.class).resource(claim).delete();
        NodePool pool = defs.pool(pool(claim));
        metrics.nodeClaimDisrupted(
            "expired", pool(claim), pool == null ? "" : policy(pool), "forceful");
        events.publish(
            KarpenterEvents.disruptionTerminating(
                ClusterState.nodeOf(claim, nodes), claim, "expired"));
        claim
            .getMetadata()
            .setDeletionTimestamp(now.toString()); // gone for the rest of this pass's plans
        continue;
      }
      if (initialized(claim)) {
        recordPodEvents(claim, byNode.getOrDefault(claim.getStatus().nodeName, List.of()), now);
        live.add(claim);
      }
    }
    Map<String, Node> nodesByName = new HashMap<>();
    nodes.forEach(n -> nodesByName.put(n.getMetadata().getName(), n));
    if (commands.advance(
        claims, nodesByName, now, (c, reason) -> delete(c, reason, claims, nodesByName, now))) {
      return; // one disruption at a time: the one under way first
    }
    Map<String, NodePool> pools = new HashMap<>();
    defs.pools().forEach(p -> pools.put(p.getMetadata().getName(), p));
    // A CapacityBuffer's virtual pods (among the pending ones) are in no PodDisruptionBudget.
    PodBudgets budgets =
        PodBudgets.of(pdbs, pods.stream().filter(p -> !VirtualPod.is(p)).toList(), Set.of());
    List<NodeClaim> spared =
        live.stream()
            .filter(
                c -> pools.containsKey(pool(c)) && !DoNotDisrupt.marked(c) && !Commands.underway(c))
            .filter(c -> !DoNotDisrupt.marked(nodesByName.get(c.getStatus().nodeName)))
            .filter(
                c ->
                    byNode.getOrDefault(c.getStatus().nodeName, List.of()).stream()
                        .noneMatch(p -> DoNotDisrupt.active(p, now)))
            .toList();
    // A node whose pods a PodDisruptionBudget will not let go now would never drain: not a
    // candidate (drift with a
    // terminationGracePeriod excepted, which deletes them in the end), as upstream's
    // ValidatePodsDisruptable.
    Predicate<NodeClaim> drainable =
        c ->
            byNode.getOrDefault(c.getStatus().nodeName, List.of()).stream()
                .allMatch(budgets::allows);
    if (spared.stream()
        .noneMatch(c -> Drift.drifted(c) || consolidatable(c, pools.get(pool(c)), now))) {
      return; // nothing to disrupt: no simulation (a burst's passes stay quick)
    }
    Simulation sim = new Simulation(claims, pods, byNode);
    // Nodes pending pods are headed for (kube-scheduler has yet to bind them there) are not
    // disrupted: upstream's
    // nominated nodes.
    Set<String> nominated = sim.nominated();
    List<NodeClaim> disruptable =
        spared.stream().filter(c -> !nominated.contains(c.getMetadata().getName())).toList();
    List<NodeClaim> drifted =
        disruptable.stream()
            .filter(Drift::drifted)
            .filter(c -> c.getSpec().terminationGracePeriod != null || drainable.test(c))
            .toList();
    List<NodeClaim> consolidatable =
        disruptable.stream()
            .filter(c -> consolidatable(c, pools.get(pool(c)), now))
            .filter(drainable)
            .toList();
    for (NodeClaim claim :
        live) { // upstream's Consolidatable condition: past consolidateAfter, may be consolidated
      boolean is = consolidatable.contains(claim);
      ClaimConditions.write(
          kube,
          claim,
          Conditions.CONSOLIDATABLE,
          is ? "True" : null,
          Conditions.CONSOLIDATABLE,
          "");
    }
    // A node a CapacityBuffer's virtual pods would go to is not empty, as upstream's emptiness
    // sees it: it holds the buffer's room (consolidation may still move the room elsewhere).
    Set<String> buffering = sim.holdingBuffers();
    List<NodeClaim> empty =
        consolidatable.stream()
            .filter(c -> byNode.getOrDefault(c.getStatus().nodeName, List.of()).isEmpty())
            .filter(c -> !holdsBuffer(c, buffering, nodesByName))
            .toList();
    List<NodeClaim> underutilized =
        new ArrayList<>(
            consolidatable.stream()
                .filter(
                    c ->
                        !empty.contains(c)
                            && "WhenEmptyOrUnderutilized".equals(policy(pools.get(pool(c)))))
                .toList());
    underutilized.sort(
        Comparator.comparingLong(
            c -> requested(byNode.getOrDefault(c.getStatus().nodeName, List.of()))));
    metrics.eligibleNodes(
        Map.of(
            "drifted",
            drifted.size(),
            "empty",
            empty.size(),
            "underutilized",
            underutilized.size()));
    if (drifted.isEmpty() && consolidatable.isEmpty()) {
      return;
    }
    for (NodeClaim claim : drifted) {
      if (allowed(List.of(claim), "Drifted", pools, claims, now)
          && execute(
              sim.evaluate(List.of(claim), false, Integer.MAX_VALUE),
              "Drifted",
              "",
              sim,
              nodesByName,
              claims,
              now)) {
        return;
      }
    }
    boolean emptied = false;
    for (NodeClaim claim : empty) {
      if (allowed(List.of(claim), "Empty", pools, claims, now)) {
        delete(claim, "Empty", claims, nodesByName, now);
        metrics.disruptionDecision("delete", "empty", "empty");
        emptied = true;
      }
    }
    if (emptied) {
      return; // one kind of consolidation per pass: the next pass sees the cluster as it is then
    }
    if (!sim.changedSince(lastFruitless)) {
      return; // nothing moved since the last pass found nothing to consolidate: it would find
      // nothing again
    }
    long deadline = System.nanoTime() + CONSOLIDATION_BUDGET.toNanos();
    for (int k = Math.min(MULTI_NODE_MAX, underutilized.size());
        k >= 2 && System.nanoTime() < deadline;
        k--) {
      List<NodeClaim> some = underutilized.subList(0, k);
      if (allowed(some, "Underutilized", pools, claims, now)
          && execute(
              sim.evaluate(some, true, 1),
              "Underutilized",
              "multi",
              sim,
              nodesByName,
              claims,
              now)) {
        return;
      }
    }
    for (NodeClaim claim : underutilized) {
      if (System.nanoTime() >= deadline) {
        return; // the rest next pass: provisioning must not wait behind consolidation
      }
      if (allowed(List.of(claim), "Underutilized", pools, claims, now)
          && execute(
              sim.evaluate(List.of(claim), true, 1),
              "Underutilized",
              "single",
              sim,
              nodesByName,
              claims,
              now)) {
        return;
      }
    }
    lastFruitless = sim.fingerprint();
  }

  /** Whether the claim's node holds buffer room: said (as upstream says it) when it does. */
  private boolean holdsBuffer(NodeClaim claim, Set<String> buffering, Map<String, Node> nodes) {
    if (!buffering.contains(claim.getMetadata().getName())) {
      return false;
    }
    events.publish(
        KarpenterEvents.unconsolidatable(
            nodes.get(claim.getStatus().nodeName),
            claim,
            "Node \"" + claim.getStatus().nodeName + "\" has buffer pods"));
    return true;
  }

  /**
   * What-if scheduling over the cluster as it is: the candidates gone, their pods placed on the
   * other nodes (after the pending pods have taken what they would) and, where allowed, on new
   * nodes.
   */
  private final class Simulation {
    private final List<NodeClaim> claims;
    private final List<Pod> pods;
    private final Map<String, List<Pod>> byNode;
    private ClusterState state;

    /**
     * Where the pods with no place now would go (pending pods, and those on nodes being disrupted),
     * once.
     */
    private Map<PodRequest, Scheduler.PlannedNode> headed;

    /** Those of the pods with no place that are CapacityBuffers' virtual pods. */
    private final Set<PodRequest> virtual = Collections.newSetFromMap(new IdentityHashMap<>());

    Simulation(List<NodeClaim> claims, List<Pod> pods, Map<String, List<Pod>> byNode) {
      this.claims = claims;
      this.pods = pods;
      this.byNode = byNode;
    }

    ClusterState state() throws Exception {
      if (state == null) {
        state = provisioner.state(claims, pods);
      }
      return state;
    }

    /**
     * Pods that need a place: those pending, and those on nodes being deleted or replaced (they
     * will move), as upstream counts them — so the node they are headed for (a replacement up a
     * moment ago, say) is not taken away.
     */
    private Map<PodRequest, Scheduler.PlannedNode> headed() throws Exception {
      if (headed == null) {
        List<PodRequest> homeless = new ArrayList<>();
        pods.stream()
            .filter(PodRequests::unschedulable)
            .forEach(
                p -> {
                  PodRequest request = PodRequests.of(p);
                  homeless.add(request);
                  if (VirtualPod.is(p)) {
                    virtual.add(request);
                  }
                });
        for (NodeClaim c : claims) {
          if ((c.getMetadata().getDeletionTimestamp() != null || Commands.underway(c))
              && c.getStatus() != null) {
            byNode.getOrDefault(c.getStatus().nodeName, List.of()).stream()
                .map(PodRequests::of)
                .forEach(homeless::add);
          }
        }
        headed =
            homeless.isEmpty()
                ? Map.of()
                : scheduler
                    .schedule(homeless, state().views, List.of(), destinations(Set.of()))
                    .onExisting();
      }
      return headed;
    }

    /**
     * The NodeClaims whose nodes pods with no place now are headed for: upstream's nominated nodes.
     * A buffer's virtual pods nominate none, as upstream's: they are there every pass, and would
     * keep their nodes from drift and consolidation for good.
     */
    Set<String> nominated() throws Exception {
      return headedFor(pod -> !virtual.contains(pod));
    }

    /** The NodeClaims whose nodes CapacityBuffers' virtual pods are headed for. */
    Set<String> holdingBuffers() throws Exception {
      return headedFor(virtual::contains);
    }

    private Set<String> headedFor(Predicate<PodRequest> which) throws Exception {
      if (headed().isEmpty()) {
        return Set.of();
      }
      Map<Scheduler.PlannedNode, NodeClaim> claimOf = new IdentityHashMap<>();
      state().nodes.forEach((claim, node) -> claimOf.put(node, claim));
      Set<String> names = new HashSet<>();
      headed()
          .forEach(
              (pod, node) -> {
                if (which.test(pod)) {
                  names.add(claimOf.get(node).getMetadata().getName());
                }
              });
      return names;
    }

    /**
     * Nodes pods may be moved to: initialized ones (a node not up yet may never be: upstream will
     * not count on one), not being replaced, not among {@code excluded}.
     */
    private List<Scheduler.PlannedNode> destinations(Set<String> excluded) throws Exception {
      List<Scheduler.PlannedNode> nodes = new ArrayList<>();
      state()
          .nodes
          .forEach(
              (c, node) -> {
                if (!excluded.contains(c.getMetadata().getName())
                    && initialized(c)
                    && !Commands.underway(c)) {
                  nodes.add(node);
                }
              });
      return nodes;
    }

    /**
     * What this simulation saw, for telling whether anything changed since: claims, and pods and
     * their nodes.
     */
    String fingerprint() {
      List<String> parts = new ArrayList<>();
      claims.forEach(
          c -> parts.add(c.getMetadata().getName() + "@" + c.getMetadata().getResourceVersion()));
      pods.forEach(
          p ->
              parts.add(
                  p.getMetadata().getUid()
                      + ">"
                      + (p.getSpec() == null ? "" : p.getSpec().getNodeName())
                      + (p.getMetadata().getDeletionTimestamp() == null ? "" : "x")));
      parts.sort(null);
      return Integer.toHexString(parts.hashCode()) + ":" + parts.size();
    }

    boolean changedSince(String fingerprint) {
      return !fingerprint().equals(fingerprint);
    }

    /**
     * The decision that removes the candidates, or null if there is none: their pods must all find
     * a place; with {@code cheaper}, on at most {@code maxNew} new nodes that cost less than the
     * candidates do.
     */
    Decision evaluate(List<NodeClaim> candidates, boolean cheaper, int maxNew) throws Exception {
      ClusterState state = state();
      if (candidates.stream().anyMatch(c -> state.nodes.get(c) == null)) {
        return null; // its shape or pool is gone from the plan: nothing to reason about
      }
      Set<String> names =
          new HashSet<>(candidates.stream().map(c -> c.getMetadata().getName()).toList());
      // The pods with no place now take theirs first: nothing is consolidated onto capacity they
      // would use. Those
      // headed for a candidate need a place as much as its own pods do.
      Map<Scheduler.PlannedNode, NodeClaim> claimOf = new IdentityHashMap<>();
      state.nodes.forEach((claim, node) -> claimOf.put(node, claim));
      Map<PodRequest, Scheduler.PlannedNode> settled = new IdentityHashMap<>();
      List<PodRequest> moving = new ArrayList<>();
      headed()
          .forEach(
              (pod, node) -> {
                if (names.contains(claimOf.get(node).getMetadata().getName())) {
                  moving.add(pod);
                } else {
                  settled.put(pod, node);
                }
              });
      List<Scheduler.PlannedNode> others = absorb(destinations(names), settled);
      candidates.forEach(
          c ->
              byNode.getOrDefault(c.getStatus().nodeName, List.of()).stream()
                  .map(PodRequests::of)
                  .forEach(moving::add));
      Scheduler.Plan plan =
          scheduler.schedule(moving, state.views, provisioner.launchable(state), others);
      if (!plan.unschedulable().isEmpty() || plan.nodes().size() > maxNew) {
        return null;
      }
      double before = candidates.stream().mapToDouble(c -> state.nodes.get(c).type().price()).sum();
      if (cheaper
          && !plan.nodes().isEmpty()
          && plan.nodes().stream().mapToDouble(n -> n.type().price()).sum() >= before) {
        return null;
      }
      return new Decision(candidates, plan.nodes(), cheaper ? before : Double.MAX_VALUE);
    }
  }

  /**
   * The nodes with the pending pods that would go there added: what is left for the pods being
   * moved.
   */
  private static List<Scheduler.PlannedNode> absorb(
      List<Scheduler.PlannedNode> nodes, Map<PodRequest, Scheduler.PlannedNode> placed) {
    Map<Scheduler.PlannedNode, List<PodRequest>> added = new IdentityHashMap<>();
    placed.forEach((pod, node) -> added.computeIfAbsent(node, n -> new ArrayList<>()).add(pod));
    return nodes.stream()
        .map(
            n -> {
              List<PodRequest> more = added.get(n);
              if (more == null) {
                return n;
              }
              List<PodRequest> all = new ArrayList<>(n.pods());
              all.addAll(more);
              Resources taken =
                  more.stream().map(PodRequest::requests).reduce(Resources.NONE, Resources::plus);
              return new Scheduler.PlannedNode(
                  n.pool(), n.type(), all, n.free().minus(taken), n.labels());
            })
        .toList();
  }

  /**
   * Carries out a decision: deletes the candidates now, or launches their replacements and waits
   * for them.
   */
  private boolean execute(
      Decision decision,
      String reason,
      String consolidationType,
      Simulation sim,
      Map<String, Node> nodes,
      List<NodeClaim> claims,
      Instant now)
      throws Exception {
    if (decision == null) {
      return false;
    }
    String why = reason.toLowerCase(Locale.ROOT);
    if (decision.replacements().isEmpty()) {
      decision.candidates().forEach(c -> delete(c, reason, claims, nodes, now));
      metrics.disruptionDecision("delete", why, consolidationType);
      return true;
    }
    List<NodeClaim> launched =
        provisioner.replacements(sim.state(), decision.replacements(), why, decision.priceBelow());
    if (launched == null) {
      return false; // no machine for a replacement now: the nodes stay
    }
    commands.start(decision.candidates(), launched, reason, nodes, now);
    metrics.disruptionDecision("replace", why, consolidationType);
    return true;
  }

  /** Whether each candidate's pool's budget for the reason allows that many more at once. */
  private static boolean allowed(
      List<NodeClaim> candidates,
      String reason,
      Map<String, NodePool> pools,
      List<NodeClaim> claims,
      Instant now) {
    Map<String, Integer> wanted = new HashMap<>();
    candidates.forEach(c -> wanted.merge(pool(c), 1, Integer::sum));
    for (Map.Entry<String, Integer> e : wanted.entrySet()) {
      List<NodeClaim> ofPool = claims.stream().filter(c -> e.getKey().equals(pool(c))).toList();
      int disrupting =
          (int)
              ofPool.stream()
                  .filter(
                      c -> c.getMetadata().getDeletionTimestamp() != null || Commands.underway(c))
                  .count();
      if (NodePoolBudgets.allowed(pools.get(e.getKey()), reason, ofPool.size(), disrupting, now)
          < e.getValue()) {
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

  /** Deletes the claim (termination drains it), counting and telling it as upstream does. */
  private void delete(
      NodeClaim claim,
      String reason,
      List<NodeClaim> claims,
      Map<String, Node> nodes,
      Instant now) {
    LOG.info("NodeClaim {}: disrupting ({})", claim.getMetadata().getName(), reason);
    kube.resources(NodeClaim.class).resource(claim).delete();
    String why = reason.toLowerCase(Locale.ROOT);
    NodePool pool = defs.pool(pool(claim));
    metrics.nodeClaimDisrupted(why, pool(claim), pool == null ? "" : policy(pool), "graceful");
    events.publish(
        KarpenterEvents.disruptionTerminating(nodes.get(claim.getStatus().nodeName), claim, why));
    claim
        .getMetadata()
        .setDeletionTimestamp(now.toString()); // counts as disrupting for the rest of this pass
  }

  /** Keeps {@code status.lastPodEventTime} at the last time a pod came to or left the node. */
  private void recordPodEvents(NodeClaim claim, List<Pod> onNode, Instant now) {
    Set<String> uids = new TreeSet<>(onNode.stream().map(p -> p.getMetadata().getUid()).toList());
    Set<String> before = podsSeen.get(claim.getStatus().nodeName);
    boolean changed =
        before == null ? claim.getStatus().lastPodEventTime == null : !before.equals(uids);
    if (changed) {
      try {
        kube.resources(NodeClaim.class)
            .withName(claim.getMetadata().getName())
            .editStatus(
                c -> {
                  c.getStatus().lastPodEventTime = now.toString();
                  return c;
                });
        claim.getStatus().lastPodEventTime = now.toString();
      } catch (RuntimeException e) {
        LOG.warn(
            "NodeClaim {}: recording its last pod event failed ({}); next pass",
            claim.getMetadata().getName(),
            e.getMessage());
        return;
      }
    }
    podsSeen.put(claim.getStatus().nodeName, uids);
  }

  private static boolean consolidatable(NodeClaim claim, NodePool pool, Instant now) {
    if (pool == null || DoNotDisrupt.marked(claim) || pool.isStatic()) {
      return false;
    }
    String after =
        pool.getSpec().disruption == null ? null : pool.getSpec().disruption.consolidateAfter;
    if ("Never".equals(after)) {
      return false;
    }
    if (claim.getStatus().lastPodEventTime == null) {
      return false; // not recorded yet: the clock has not started
    }
    Instant quietSince = Instant.parse(claim.getStatus().lastPodEventTime);
    Duration wait = GoDuration.parseOr(after, Duration.ZERO, null);
    return wait != null && !now.isBefore(quietSince.plus(wait));
  }

  private static boolean expired(NodeClaim claim, Instant now) {
    String after = claim.getSpec().expireAfter;
    if ("Never".equals(after) || claim.getMetadata().getCreationTimestamp() == null) {
      return false;
    }
    Duration lifetime =
        GoDuration.parseOr(after, DEFAULT_EXPIRE_AFTER, null); // invalid: never, not a failed pass
    return lifetime != null
        && now.isAfter(Instant.parse(claim.getMetadata().getCreationTimestamp()).plus(lifetime));
  }

  private static boolean initialized(NodeClaim claim) {
    return claim.getStatus() != null
        && claim.getStatus().nodeName != null
        && Conditions.isTrue(claim.getStatus().conditions, Conditions.INITIALIZED);
  }

  private static String policy(NodePool pool) {
    return pool.getSpec().disruption == null
            || pool.getSpec().disruption.consolidationPolicy == null
        ? "WhenEmptyOrUnderutilized"
        : pool.getSpec().disruption.consolidationPolicy;
  }

  private static long requested(List<Pod> pods) {
    return pods.stream().mapToLong(p -> PodRequests.of(p).requests().cpuMilli()).sum();
  }

  private static String pool(NodeClaim claim) {
    return claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL);
  }
}
