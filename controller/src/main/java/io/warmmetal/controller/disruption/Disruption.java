package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.events.KarpenterEvents;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.instances.InstancesApi;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.DoNotDisrupt;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.provisioning.ClusterState;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.provisioning.Definitions;
import io.warmmetal.controller.karpenter.GoDuration;
import io.warmmetal.controller.provisioning.PodRequests;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.termination.Termination;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes nodes away, as Karpenter's disruption controller does, by deleting their NodeClaims (termination drains
 * them): expired ones ({@code expireAfter}, forcefully: no budgets), then — once a node has had no pod come or go for
 * its pool's {@code consolidateAfter} — empty ones, then under {@code WhenEmptyOrUnderutilized} one node whose pods
 * all fit on the other nodes. Consolidation waits while pods are pending (provisioning goes first), spares nodes
 * with {@code karpenter.sh/do-not-disrupt} pods, and stays within the pool's disruption budgets.
 */
public final class Disruption {
  private static final Logger LOG = LoggerFactory.getLogger(Disruption.class);
  static final Duration DEFAULT_EXPIRE_AFTER = Duration.ofHours(720);

  private final KubernetesClient kube;
  private final Definitions defs;
  private final Function<WarmMetalNodeClass, InstancesApi> apis;
  private final Scheduler scheduler;
  private final java.util.function.Supplier<List<io.fabric8.kubernetes.api.model.apps.DaemonSet>> daemonSets;
  private final Recorder events;
  private final KarpenterMetrics metrics;
  /** The pods last seen on each node: a change is a pod event, which restarts the consolidateAfter clock. */
  private final Map<String, Set<String>> podsSeen = new HashMap<>();

  public Disruption(KubernetesClient kube, Definitions defs, Function<WarmMetalNodeClass, InstancesApi> apis,
      Scheduler scheduler, java.util.function.Supplier<List<io.fabric8.kubernetes.api.model.apps.DaemonSet>> daemonSets,
      Recorder events, KarpenterMetrics metrics) {
    this.defs = defs;
    this.events = events;
    this.metrics = metrics;
    this.kube = kube;
    this.apis = apis;
    this.scheduler = scheduler;
    this.daemonSets = daemonSets;
  }

  public void reconcile(List<Pod> pods, List<io.fabric8.kubernetes.api.model.Node> nodes, List<NodeClaim> claims)
      throws Exception {
    Instant now = Instant.now();
    Map<String, List<Pod>> byNode = new HashMap<>();
    for (Pod pod : pods) {
      if (pod.getSpec() != null && pod.getSpec().getNodeName() != null
          && pod.getMetadata().getDeletionTimestamp() == null && !Termination.daemonOrMirror(pod)
          && !Termination.finished(pod)) {
        byNode.computeIfAbsent(pod.getSpec().getNodeName(), n -> new ArrayList<>()).add(pod);
      }
    }
    List<NodeClaim> live = new ArrayList<>();
    for (NodeClaim claim : claims) {
      if (claim.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      if (expired(claim, now)) {
        LOG.info("NodeClaim {} expired (expireAfter {})", claim.getMetadata().getName(), claim.getSpec().expireAfter);
        kube.resources(NodeClaim.class).resource(claim).delete();
        NodePool pool = defs.pool(pool(claim));
        metrics.nodeClaimDisrupted("expired", pool(claim), pool == null ? "" : policy(pool), "forceful");
        events.publish(KarpenterEvents.disruptionTerminating(Termination.nodeOf(claim, nodes), claim, "expired"));
        continue;
      }
      if (initialized(claim)) {
        recordPodEvents(claim, byNode.getOrDefault(claim.getStatus().nodeName, List.of()), now);
        live.add(claim);
      }
    }
    if (pods.stream().anyMatch(PodRequests::unschedulable)) {
      return;
    }
    Map<String, NodePool> pools = new HashMap<>();
    defs.pools().forEach(p -> pools.put(p.getMetadata().getName(), p));
    Map<String, io.fabric8.kubernetes.api.model.Node> nodesByName = new HashMap<>();
    nodes.forEach(n -> nodesByName.put(n.getMetadata().getName(), n));
    List<NodeClaim> candidates = live.stream()
        .filter(c -> consolidatable(c, pools.get(pool(c)), now))
        .filter(c -> !DoNotDisrupt.marked(nodesByName.get(c.getStatus().nodeName)))
        .filter(c -> byNode.getOrDefault(c.getStatus().nodeName, List.of()).stream()
            .noneMatch(p -> DoNotDisrupt.active(p, now)))
        .toList();
    long emptyCount = candidates.stream()
        .filter(c -> byNode.getOrDefault(c.getStatus().nodeName, List.of()).isEmpty()).count();
    metrics.eligibleNodes(Map.of("empty", (int) emptyCount, "underutilized", (int) candidates.stream()
        .filter(c -> "WhenEmptyOrUnderutilized".equals(policy(pools.get(pool(c))))).count()));
    if (candidates.isEmpty()) {
      return;
    }
    List<NodeClaim> empty = candidates.stream()
        .filter(c -> byNode.getOrDefault(c.getStatus().nodeName, List.of()).isEmpty()).toList();
    if (!empty.isEmpty()) {
      for (NodeClaim claim : empty) {
        disrupt(claim, "Empty", pools.get(pool(claim)), claims, nodesByName, now);
      }
      return; // one kind of consolidation per pass: the next pass sees the cluster as it is then
    }
    consolidateOne(candidates, pools, claims, pods, byNode, nodesByName, now);
  }

  /** Removes the cheapest node whose pods all fit, unchanged, on the other nodes. */
  private void consolidateOne(List<NodeClaim> candidates, Map<String, NodePool> pools, List<NodeClaim> claims,
      List<Pod> pods, Map<String, List<Pod>> byNode, Map<String, io.fabric8.kubernetes.api.model.Node> nodesByName,
      Instant now) throws Exception {
    ClusterState state = ClusterState.of(defs, apis, claims, pods, scheduler, daemonSets.get());
    List<NodeClaim> underutilized = new ArrayList<>(candidates.stream()
        .filter(c -> "WhenEmptyOrUnderutilized".equals(policy(pools.get(pool(c))))).toList());
    underutilized.sort(Comparator.comparingLong(c -> requested(byNode.get(c.getStatus().nodeName))));
    for (NodeClaim claim : underutilized) {
      List<PodRequest> moving = byNode.get(claim.getStatus().nodeName).stream().map(PodRequests::of).toList();
      List<Scheduler.PlannedNode> others = new ArrayList<>();
      state.nodes.forEach((c, node) -> {
        if (!c.getMetadata().getName().equals(claim.getMetadata().getName()) && initialized(c)) {
          others.add(node);
        }
      });
      // No new nodes (no instance types offered): only the nodes there are.
      Scheduler.Plan plan = scheduler.schedule(moving, state.views, List.of(), others);
      if (plan.nodes().isEmpty() && plan.unschedulable().isEmpty()
          && disrupt(claim, "Underutilized", pools.get(pool(claim)), claims, nodesByName, now)) {
        return;
      }
    }
  }

  private boolean disrupt(NodeClaim claim, String reason, NodePool pool, List<NodeClaim> claims,
      Map<String, io.fabric8.kubernetes.api.model.Node> nodesByName, Instant now) {
    String poolName = pool.getMetadata().getName();
    List<NodeClaim> ofPool = claims.stream().filter(c -> poolName.equals(pool(c))).toList();
    int disrupting = (int) ofPool.stream().filter(c -> c.getMetadata().getDeletionTimestamp() != null).count();
    if (NodePoolBudgets.allowed(pool, reason, ofPool.size(), disrupting, now) <= 0) {
      LOG.debug("NodeClaim {}: {} but the disruption budget of NodePool {} allows no more now",
          claim.getMetadata().getName(), reason, poolName);
      return false;
    }
    LOG.info("NodeClaim {}: disrupting ({})", claim.getMetadata().getName(), reason);
    kube.resources(NodeClaim.class).resource(claim).delete();
    String why = reason.toLowerCase(java.util.Locale.ROOT);
    metrics.disruptionDecision("delete", why, reason.equals("Empty") ? "empty" : "single");
    metrics.nodeClaimDisrupted(why, poolName, policy(pool), "graceful");
    events.publish(KarpenterEvents.disruptionTerminating(nodesByName.get(claim.getStatus().nodeName), claim, why));
    claim.getMetadata().setDeletionTimestamp(now.toString()); // counts as disrupting for the rest of this pass
    return true;
  }

  /** Keeps {@code status.lastPodEventTime} at the last time a pod came to or left the node. */
  private void recordPodEvents(NodeClaim claim, List<Pod> onNode, Instant now) {
    Set<String> uids = new TreeSet<>(onNode.stream().map(p -> p.getMetadata().getUid()).toList());
    Set<String> before = podsSeen.get(claim.getStatus().nodeName);
    boolean changed = before == null ? claim.getStatus().lastPodEventTime == null : !before.equals(uids);
    if (changed) {
      try {
        kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).editStatus(c -> {
          c.getStatus().lastPodEventTime = now.toString();
          return c;
        });
        claim.getStatus().lastPodEventTime = now.toString();
      } catch (RuntimeException e) {
        LOG.warn("NodeClaim {}: recording its last pod event failed ({}); next pass", claim.getMetadata().getName(),
            e.getMessage());
        return;
      }
    }
    podsSeen.put(claim.getStatus().nodeName, uids);
  }

  private static boolean consolidatable(NodeClaim claim, NodePool pool, Instant now) {
    if (pool == null || DoNotDisrupt.marked(claim)) {
      return false;
    }
    String after = pool.getSpec().disruption == null ? null : pool.getSpec().disruption.consolidateAfter;
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
    Duration lifetime = GoDuration.parseOr(after, DEFAULT_EXPIRE_AFTER, null); // invalid: never, not a failed pass
    return lifetime != null && now.isAfter(Instant.parse(claim.getMetadata().getCreationTimestamp()).plus(lifetime));
  }


  private static boolean initialized(NodeClaim claim) {
    return claim.getStatus() != null && claim.getStatus().nodeName != null
        && Conditions.isTrue(claim.getStatus().conditions, Conditions.INITIALIZED);
  }

  private static String policy(NodePool pool) {
    return pool.getSpec().disruption == null || pool.getSpec().disruption.consolidationPolicy == null
        ? "WhenEmptyOrUnderutilized" : pool.getSpec().disruption.consolidationPolicy;
  }

  private static long requested(List<Pod> pods) {
    return pods.stream().mapToLong(p -> PodRequests.of(p).requests().cpuMilli()).sum();
  }

  private static String pool(NodeClaim claim) {
    return claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL);
  }
}
