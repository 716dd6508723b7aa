package io.warmmetal.controller.standby;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.cloudprovider.CloudProviderException.InsufficientCapacity;
import io.warmmetal.controller.cloudprovider.CloudProviderException.NotFound;
import io.warmmetal.controller.cloudprovider.CloudProviderException.QuotaExceeded;
import io.warmmetal.controller.cloudprovider.Instance;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeReadiness;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass.PreJoined;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass.PreJoinedStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each node class's pre-joined standby nodes ({@code spec.preJoined}): machines joined to the
 * cluster ahead of time, as Nodes that belong to no NodePool, carry the {@code
 * warmmetal.io/standby} label and taint (NoSchedule and NoExecute) and wait for a NodeClaim to take
 * one without a join (the provisioner's launches allow it; registration then gives the Node the
 * claim's labels, taints and owner and lifts the standby taint).
 *
 * <p>The instances API is the record: a standby node is a standby instance ({@code standby: true})
 * labelled with its node class, its entry and the class's hash, so a restarted controller counts
 * the same ones. Each pass (at most every {@link #EVERY}, or at once after a launch took one) it
 * joins what an entry lacks, one launch per node; terminates what is no longer asked for — more
 * than the count, an entry removed, a node class changed since (as drift would), a node whose
 * kubelet has not been Ready for {@code unhealthyAfter} or that never registered — so its machine
 * is reset and joined again; and deletes the Node object of a standby machine no longer standby
 * that no NodeClaim took. An entry that cannot be filled (no machine, a quota) says so in the node
 * class's status and an event, and is tried again after {@link #SHORT_BACKOFF}.
 */
public final class PreJoinedStandby {
  private static final Logger LOG = LoggerFactory.getLogger(PreJoinedStandby.class);
  static final Duration EVERY = Duration.ofSeconds(2);
  static final Duration SHORT_BACKOFF = Duration.ofSeconds(10);
  public static final Duration UNHEALTHY_AFTER = Duration.ofMinutes(2);

  /** A Node left by a standby machine that stopped being one, kept this long for its claim. */
  static final Duration ORPHAN_GRACE = Duration.ofSeconds(30);

  private static final int LAUNCHES_PER_PASS = 8;

  private final KubernetesClient kube;
  private final CloudProvider cloud;
  private final Recorder events;
  private final Duration unhealthyAfter;
  private final Map<String, List<PreJoinedStatus>> report = new ConcurrentHashMap<>();
  private final Map<String, Instant> shortUntil = new HashMap<>();
  private final Map<String, Instant> orphanSince = new HashMap<>();

  /** Node classes that had standby instances at their last count (asked again until none). */
  private final Set<String> holding = new HashSet<>();

  /** What pre-joined CapacityBuffers ask of each node class, beside its {@code spec.preJoined}. */
  private volatile Map<String, List<PreJoined>> fromBuffers = Map.of();

  private volatile boolean due = true;
  private Instant lastRun = Instant.EPOCH;

  public PreJoinedStandby(
      KubernetesClient kube, CloudProvider cloud, Recorder events, Duration unhealthyAfter) {
    this.kube = kube;
    this.cloud = cloud;
    this.events = events;
    this.unhealthyAfter = unhealthyAfter;
  }

  /**
   * The standby nodes pre-joined CapacityBuffers need, per node class (added to its own entries:
   * the same type and zone count together).
   */
  public void fromBuffers(Map<String, List<PreJoined>> wanted) {
    if (!wanted.equals(fromBuffers)) {
      due = true;
    }
    fromBuffers = Map.copyOf(wanted);
  }

  /** Counts again in the next pass rather than after {@link #EVERY}: one was taken. */
  public void wake() {
    due = true;
  }

  /** The node class's entries as last counted, or null if it keeps none. */
  public List<PreJoinedStatus> status(String nodeClass) {
    return report.get(nodeClass);
  }

  public void reconcile(
      List<WarmMetalNodeClass> nodeClasses, List<Node> nodes, List<NodeClaim> claims) {
    Instant now = Instant.now();
    if (!due && lastRun.plus(EVERY).isAfter(now)) {
      return;
    }
    due = false;
    lastRun = now;
    Map<String, Node> byProvider = new HashMap<>();
    for (Node n : nodes) {
      if (n.getSpec() != null && n.getSpec().getProviderID() != null) {
        byProvider.put(n.getSpec().getProviderID(), n);
      }
    }
    Set<String> standbyMachines = new HashSet<>();
    boolean countedAll = true;
    for (WarmMetalNodeClass nodeClass : nodeClasses) {
      String name = nodeClass.getMetadata().getName();
      if (nodeClass.getSpec().preJoined.isEmpty()
          && !holding.contains(name)
          && !fromBuffers.containsKey(name)) {
        report.remove(name);
        continue;
      }
      try {
        List<Instance> live = count(nodeClass, byProvider, now);
        live.forEach(i -> standbyMachines.add(i.providerId()));
        if (live.isEmpty()) {
          holding.remove(name);
        } else {
          holding.add(name);
        }
      } catch (CloudProviderException e) {
        countedAll = false;
        LOG.warn("WarmMetalNodeClass {}: standby nodes not counted ({})", name, e.getMessage());
      }
    }
    report.keySet().retainAll(nodeClasses.stream().map(c -> c.getMetadata().getName()).toList());
    if (countedAll) {
      deleteLeftNodes(nodes, claims, standbyMachines, now);
    }
  }

  /**
   * One node class: retires what is not wanted, joins what is missing; returns its standby
   * instances that stay.
   */
  private List<Instance> count(
      WarmMetalNodeClass nodeClass, Map<String, Node> byProvider, Instant now)
      throws CloudProviderException {
    String name = nodeClass.getMetadata().getName();
    List<Instance> live = cloud.listStandby(nodeClass);
    String hash = nodeClass.hash();
    Map<String, PreJoined> entries = new LinkedHashMap<>();
    List<PreJoined> wanted = new ArrayList<>(nodeClass.getSpec().preJoined);
    wanted.addAll(fromBuffers.getOrDefault(name, List.of()));
    for (PreJoined e : wanted) {
      PreJoined sum = entries.get(e.key());
      entries.put(
          e.key(),
          new PreJoined(
              e.instanceType,
              (sum == null ? 0 : sum.count) + (e.count == null ? 0 : e.count),
              e.zone));
    }
    List<Instance> kept = new ArrayList<>();
    for (Instance instance : live) {
      String why;
      if (!entries.containsKey(instance.label(WellKnown.STANDBY_ENTRY_LABEL))) {
        why = "its node class no longer asks for it";
      } else if (!hash.equals(instance.label(WellKnown.NODECLASS_HASH_LABEL))) {
        why = "its node class changed since it joined";
      } else {
        why = unhealthy(instance, byProvider.get(instance.providerId()), now);
      }
      if (why == null) {
        kept.add(instance);
      } else {
        retire(nodeClass, instance, why);
      }
    }
    List<PreJoinedStatus> statuses = new ArrayList<>();
    List<Instance> stay = new ArrayList<>();
    for (PreJoined entry : entries.values()) {
      List<Instance> mine =
          new ArrayList<>(
              kept.stream()
                  .filter(i -> entry.key().equals(i.label(WellKnown.STANDBY_ENTRY_LABEL)))
                  .toList());
      int count = entry.count == null ? 0 : entry.count;
      // More than asked for: the ones still joining go first, then the newest.
      mine.sort(
          Comparator.comparing((Instance i) -> i.running())
              .thenComparing(i -> i.createdAt(), Comparator.reverseOrder()));
      while (mine.size() > count) {
        retire(nodeClass, mine.remove(0), "more than its node class asks for");
      }
      stay.addAll(mine);
      int ready =
          (int)
              mine.stream()
                  .filter(i -> i.running())
                  .filter(i -> NodeReadiness.ready(byProvider.get(i.providerId())))
                  .count();
      int joining = mine.size() - ready;
      String message = null;
      int missing = count - mine.size();
      String shortKey = name + "/" + entry.key();
      for (int k = 0; k < Math.min(missing, LAUNCHES_PER_PASS); k++) {
        Instant until = shortUntil.get(shortKey);
        if (until != null && until.isAfter(now)) {
          message = "waiting before trying again: too few machines a moment ago";
          break;
        }
        try {
          Instance instance = cloud.createStandby(nodeClass, entry);
          joining++;
          events.publish(StandbyEvents.launched(nodeClass, entry.key(), instance.id()));
          LOG.info(
              "WarmMetalNodeClass {}: joining standby node {} for {}",
              name,
              instance.id(),
              entry.key());
        } catch (InsufficientCapacity | QuotaExceeded e) {
          // Short of machines (an outage is not that: it fails the count, which is tried again)
          message = e.getMessage();
          shortUntil.put(shortKey, now.plus(SHORT_BACKOFF));
          events.publish(StandbyEvents.shortOfMachines(nodeClass, entry.key(), e.getMessage()));
          break;
        }
      }
      statuses.add(new PreJoinedStatus(entry, ready, joining, message));
    }
    report.put(name, statuses);
    return stay;
  }

  /**
   * Why a standby node is no use (its kubelet not Ready for {@code unhealthyAfter}, or no Node that
   * long after its join succeeded), or null.
   */
  private String unhealthy(Instance instance, Node node, Instant now) {
    if (!instance.running()) {
      return null; // still joining: the API's join timeout watches that
    }
    if (node == null) {
      Instant runningAt = instance.runningAt();
      return runningAt != null && runningAt.plus(unhealthyAfter).isBefore(now)
          ? "its Node never registered"
          : null;
    }
    NodeCondition readyCondition = NodeReadiness.condition(node);
    if (readyCondition == null || "True".equals(readyCondition.getStatus())) {
      return null;
    }
    String since = readyCondition.getLastTransitionTime();
    return since != null && Instant.parse(since).plus(unhealthyAfter).isBefore(now)
        ? "its Node has not been Ready since " + since
        : null;
  }

  private void retire(WarmMetalNodeClass nodeClass, Instance instance, String why)
      throws CloudProviderException {
    String id = instance.id();
    LOG.info(
        "WarmMetalNodeClass {}: standby instance {}: {}",
        nodeClass.getMetadata().getName(),
        id,
        why);
    events.publish(StandbyEvents.replaced(nodeClass, id, why));
    try {
      cloud.terminate(nodeClass, id);
    } catch (NotFound gone) {
      // retired already
    }
  }

  /**
   * A standby Node whose machine is no longer a standby one of ours (retired: it is being reset)
   * and that no NodeClaim took goes, once it has been so for {@link #ORPHAN_GRACE} (a launch that
   * took it records its claim within that).
   */
  private void deleteLeftNodes(
      List<Node> nodes, List<NodeClaim> claims, Set<String> standbyMachines, Instant now) {
    Set<String> claimed = new HashSet<>();
    for (NodeClaim claim : claims) {
      if (claim.getStatus() != null && claim.getStatus().providerID != null) {
        claimed.add(claim.getStatus().providerID);
      }
    }
    Set<String> seen = new HashSet<>();
    for (Node node : nodes) {
      Map<String, String> labels = node.getMetadata().getLabels();
      String provider = node.getSpec() == null ? null : node.getSpec().getProviderID();
      if (labels == null
          || !labels.containsKey(WellKnown.STANDBY)
          || provider == null
          || standbyMachines.contains(provider)
          || claimed.contains(provider)) {
        continue;
      }
      String name = node.getMetadata().getName();
      seen.add(name);
      Instant since = orphanSince.computeIfAbsent(name, n -> now);
      if (since.plus(ORPHAN_GRACE).isAfter(now)) {
        continue;
      }
      try {
        kube.nodes().withName(name).delete();
        LOG.info("Standby Node {} deleted: its machine is no longer standby", name);
      } catch (KubernetesClientException e) {
        LOG.warn("Standby Node {} not deleted ({}); next pass", name, e.getMessage());
      }
    }
    orphanSince.keySet().retainAll(seen);
  }
}
