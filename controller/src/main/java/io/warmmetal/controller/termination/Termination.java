package io.warmmetal.controller.termination;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.cloudprovider.CloudProviderException.NotFound;
import io.warmmetal.controller.events.KarpenterEvents;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.DoNotDisrupt;
import io.warmmetal.controller.karpenter.GoDuration;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.state.ClusterState;
import io.warmmetal.controller.state.Definitions;
import io.warmmetal.controller.state.Pods;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The {@code karpenter.sh/termination} finalizer of a NodeClaim being deleted (by consolidation,
 * expiry, a lapsed registration, or by hand): taint its Node {@code
 * karpenter.sh/disrupted:NoSchedule}, drain it by eviction — PodDisruptionBudgets honoured, {@code
 * karpenter.sh/do-not-disrupt} pods left alone — until nothing but DaemonSet and mirror pods is
 * left, then terminate the instance (the machine resets and goes back to its pool), delete the Node
 * (and drop its own finalizer, {@link NodeFinalizer}) and let the NodeClaim go. Past the claim's
 * {@code terminationGracePeriod} the drain stops waiting: whatever is left is deleted, budgets and
 * do-not-disrupt notwithstanding, as in Karpenter.
 */
public final class Termination {
  private static final Logger LOG = LoggerFactory.getLogger(Termination.class);
  private static final Duration EVICTION_MEMORY = Duration.ofMinutes(2);

  /** Where a disruption under way says why on its claims (disruption's own bookkeeping). */
  public static final String DISRUPTION_REASON = "warmmetal.io/disruption-reason";

  private final KubernetesClient kube;
  private final NodeClaimWriter writer;
  private final Definitions defs;
  private final CloudProvider cloud;
  private final Recorder events;
  private final KarpenterMetrics metrics;

  /**
   * Pods this controller evicted, by UID, and when: until the informer shows them terminating they
   * are neither evicted again nor counted healthy (as the disruption controller's own record of
   * disrupted pods does).
   */
  private final Map<String, Instant> evicted = new HashMap<>();

  /**
   * Pods whose wait was logged, and why: a drain that waits is told once per reason, not on every
   * pass.
   */
  private final Map<String, String> waitLogged = new ConcurrentHashMap<>();

  public Termination(
      KubernetesClient kube,
      NodeClaimWriter writer,
      Definitions defs,
      CloudProvider cloud,
      Recorder events,
      KarpenterMetrics metrics) {
    this.defs = defs;
    this.events = events;
    this.metrics = metrics;
    this.kube = kube;
    this.writer = writer;
    this.cloud = cloud;
  }

  /**
   * One claim being deleted, as its lifecycle reconciles it: drains its Node, terminates its
   * instance, deletes the Node and drops the finalizer. Returns whether it is done (else it is
   * looked at again: pods take their time to go). Claims terminate side by side; their drains take
   * turns, so each counts the PodDisruptionBudgets with the evictions of the others.
   */
  public boolean reconcile(
      NodeClaim claim, List<Node> nodes, List<Pod> pods, List<PodDisruptionBudget> pdbs) {
    if (claim.getMetadata().getDeletionTimestamp() == null
        || !claim.getMetadata().getFinalizers().contains(WellKnown.TERMINATION_FINALIZER)) {
      return true;
    }
    MDC.put("nodeclaim", claim.getMetadata().getName());
    try {
      return finish(claim, nodes, pods, pdbs);
    } catch (Exception e) {
      LOG.warn("Terminating NodeClaim {}: {}", claim.getMetadata().getName(), e.getMessage());
      return false;
    } finally {
      MDC.remove("nodeclaim");
    }
  }

  private boolean finish(
      NodeClaim claim, List<Node> nodes, List<Pod> pods, List<PodDisruptionBudget> pdbs) {
    Node node = ClusterState.nodeOf(claim, nodes);
    String nodeName = node == null ? null : node.getMetadata().getName();
    if (node != null) {
      if (DisruptedTaint.apply(kube, node)) {
        return false; // just tainted: a pod bound a moment before may not be in our view yet
      }
      Instant deadline = deadline(claim);
      boolean forced = deadline != null && Instant.now().isAfter(deadline);
      List<Pod> left =
          pods.stream()
              .filter(p -> nodeName.equals(p.getSpec().getNodeName()))
              .filter(p -> !Pods.daemonOrMirror(p) && !Pods.finished(p) && drainable(p))
              .toList();
      synchronized (evicted) {
        Instant now = Instant.now();
        evicted.values().removeIf(at -> at.isBefore(now.minus(EVICTION_MEMORY)));
        PodBudgets budgets = PodBudgets.of(pdbs, pods, evicted.keySet());
        for (Pod pod : left) {
          if (pod.getMetadata().getDeletionTimestamp() == null
              && !evicted.containsKey(pod.getMetadata().getUid())) {
            drain(pod, forced, budgets, deadline, disruptionReason(claim));
          }
        }
      }
      if (!left.isEmpty() && deadline != null && !forced) {
        events.publish(KarpenterEvents.terminationGracePeriodExpiring(claim, deadline.toString()));
      }
      if (!left.isEmpty() && !forced) {
        writer.condition(
            claim, Conditions.DRAINED, "Unknown", "Draining", left.size() + " pod(s) to go");
        return false; // looked at again: pods take their time to go
      }
      if (!Conditions.isTrue(claim.getStatus().conditions, Conditions.DRAINED)) {
        metrics.nodeDrained(poolOf(claim));
      }
      writer.condition(claim, Conditions.DRAINED, "True", Conditions.DRAINED, "");
    }
    long terminating = System.nanoTime();
    if (!terminateInstance(claim)) {
      return false;
    }
    metrics.instanceTerminationDuration(
        poolOf(claim), Duration.ofNanos(System.nanoTime() - terminating));
    if (node != null) {
      NodeFinalizer.deleteAndRelease(kube, node);
    }
    try {
      writer.edit(
          claim.getMetadata().getName(),
          c -> {
            c.getMetadata()
                .setFinalizers(
                    new ArrayList<>(
                        c.getMetadata().getFinalizers().stream()
                            .filter(f -> !WellKnown.TERMINATION_FINALIZER.equals(f))
                            .toList()));
            return c;
          });
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return true; // finished already: a second look at a claim that is gone
      }
      throw e;
    }
    LOG.info(
        "NodeClaim {} terminated{}",
        claim.getMetadata().getName(),
        node == null ? "" : ": Node " + nodeName + " drained and deleted");
    var labels = claim.getMetadata().getLabels();
    String pool = labels.get(WellKnown.NODEPOOL_LABEL);
    metrics.nodeClaimTerminated(
        pool, labels.get(WellKnown.CAPACITY_TYPE_LABEL), labels.get(WellKnown.ZONE_LABEL));
    Instant now = Instant.now();
    Instant deleted = Instant.parse(claim.getMetadata().getDeletionTimestamp());
    metrics.nodeClaimTerminationDuration(pool, Duration.between(deleted, now));
    if (node != null) {
      metrics.nodeTerminated(pool, labels.get(WellKnown.ZONE_LABEL));
      // From the Node's own deletion if it was deleted first (by hand), else its claim's.
      String nodeDeleted = node.getMetadata().getDeletionTimestamp();
      metrics.nodeTerminationDuration(
          pool, Duration.between(nodeDeleted == null ? deleted : Instant.parse(nodeDeleted), now));
      if (node.getMetadata().getCreationTimestamp() != null) {
        metrics.nodeLifetime(
            pool, Duration.between(Instant.parse(node.getMetadata().getCreationTimestamp()), now));
      }
    }
    return true;
  }

  /**
   * Whether the drain waits for the pod, as upstream's IsDrainable: not one stuck terminating (a
   * minute past its deletion: its kubelet is gone, as on a dead server), nor one that tolerates the
   * disrupted taint (it would come straight back).
   */
  /**
   * When the claim's Node's pods go whatever their budgets (null: never), as upstream's node
   * termination reads it: the claim's termination-timestamp annotation — node repair sets it to the
   * moment it repairs — else its deletion plus its {@code terminationGracePeriod} (what upstream's
   * lifecycle writes there).
   */
  static Instant deadline(NodeClaim claim) {
    var annotations = claim.getMetadata().getAnnotations();
    String annotated =
        annotations == null ? null : annotations.get(WellKnown.TERMINATION_TIMESTAMP_ANNOTATION);
    if (annotated != null) {
      try {
        return OffsetDateTime.parse(annotated).toInstant();
      } catch (DateTimeParseException unreadable) {
        LOG.debug("NodeClaim {}: unreadable {}", claim.getMetadata().getName(), annotated);
      }
    }
    Duration grace = GoDuration.parseOr(claim.getSpec().terminationGracePeriod, null, null);
    return grace == null
        ? null
        : Instant.parse(claim.getMetadata().getDeletionTimestamp()).plus(grace);
  }

  /** Why the claim is being taken away, where a disruption said so on it ("" otherwise). */
  private static String disruptionReason(NodeClaim claim) {
    var annotations = claim.getMetadata().getAnnotations();
    String reason = annotations == null ? null : annotations.get(DISRUPTION_REASON);
    return reason == null ? "" : reason.toLowerCase(Locale.ROOT);
  }

  private static String poolOf(NodeClaim claim) {
    return claim.getMetadata().getLabels() == null
        ? ""
        : claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL);
  }

  private static boolean drainable(Pod pod) {
    if (pod.getMetadata().getDeletionTimestamp() != null
        && Instant.parse(pod.getMetadata().getDeletionTimestamp())
            .plus(Duration.ofMinutes(1))
            .isBefore(Instant.now())) {
      return false;
    }
    return pod.getSpec().getTolerations() == null
        || pod.getSpec().getTolerations().stream()
            .noneMatch(
                t ->
                    (t.getEffect() == null
                            || t.getEffect().isEmpty()
                            || "NoSchedule".equals(t.getEffect()))
                        && ("Exists".equals(t.getOperator())
                                && (t.getKey() == null
                                    || t.getKey().isEmpty()
                                    || WellKnown.DISRUPTED_TAINT.equals(t.getKey()))
                            || WellKnown.DISRUPTED_TAINT.equals(t.getKey())));
  }

  private void drain(Pod pod, boolean forced, PodBudgets budgets, Instant deadline, String reason) {
    String name = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    var client =
        kube.pods()
            .inNamespace(pod.getMetadata().getNamespace())
            .withName(pod.getMetadata().getName());
    if (forced) {
      LOG.info("Deleting {}: the termination grace period is over", name);
      client.delete();
      events.publish(KarpenterEvents.disrupted(pod, String.valueOf(deadline)));
      return;
    }
    if (deadline != null) {
      // Its own grace period must fit before the node's deadline: deleted that long before it, as
      // upstream does.
      long podGrace =
          pod.getSpec().getTerminationGracePeriodSeconds() == null
              ? 30
              : pod.getSpec().getTerminationGracePeriodSeconds();
      long left = Duration.between(Instant.now(), deadline).toSeconds();
      if (left <= podGrace) {
        LOG.info(
            "Deleting {}: {}s to the node's termination deadline, its grace period is {}s",
            name,
            left,
            podGrace);
        client.withGracePeriod(Math.max(0, left)).delete();
        events.publish(KarpenterEvents.disrupted(pod, deadline.toString()));
        return;
      }
    }
    if (DoNotDisrupt.active(pod, Instant.now())) {
      waiting(pod, name + ": it is marked " + WellKnown.DO_NOT_DISRUPT_ANNOTATION);
      return;
    }
    if (!budgets.allows(pod)) {
      waiting(
          pod,
          name + ": PodDisruptionBudget " + budgets.blocking(pod) + " allows no disruption now");
      return;
    }
    boolean accepted = client.evict();
    metrics.evictionRequested(accepted ? 200 : 429);
    if (accepted) {
      metrics.podDrained(reason);
      evicted.put(pod.getMetadata().getUid(), Instant.now());
      budgets.evicted(pod);
      LOG.info("Evicted {}", name);
      events.publish(KarpenterEvents.evicted(pod, "the node is being terminated"));
    } else {
      waiting(pod, name + ": the Eviction API refused (a budget)");
    }
  }

  private void waiting(Pod pod, String why) {
    if (!why.equals(waitLogged.put(pod.getMetadata().getUid(), why))) {
      LOG.info("Waiting for {}", why);
    }
    if (waitLogged.size() > 10_000) {
      waitLogged.clear(); // pods long gone; the next wait is logged again
    }
  }

  /**
   * Terminates the claim's instance — the one recorded on it, and any launched for it but not
   * recorded (a controller that stopped, or a claim deleted, between the launch and its record) —
   * found by the NodeClaim's UID label. False if that cannot be done now (the claim then waits).
   */
  private boolean terminateInstance(NodeClaim claim) {
    try {
      cloud.delete(claim);
      return true;
    } catch (NotFound none) {
      return true; // nothing left to terminate
    } catch (CloudProviderException e) {
      LOG.warn(
          "NodeClaim {}: its instance cannot be terminated now ({}); waiting",
          claim.getMetadata().getName(),
          e.getMessage());
      return false;
    }
  }
}
